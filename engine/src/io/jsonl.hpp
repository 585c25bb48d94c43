// JSON Lines reading: one JSON object per line; blank lines are skipped. Every error names the
// file and the line. Internal to the engine (public headers carry no JSON types).
#pragma once

#include "io/json/json_parse.hpp"
#include "io/text_lines.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace novelty {

class JsonlReader {
public:
    explicit JsonlReader(const std::string& path, std::size_t max_line_bytes = default_max_line_bytes)
        : lines_(path, max_line_bytes) {}

    /// Reads the next object into `record`. Returns false at end of file. Throws InputError
    /// naming file and line for invalid UTF-8 (with the byte's column), malformed JSON (also:
    /// nested deeper than max_json_depth, a number out of range), a line longer than the cap,
    /// or a line whose value is not a JSON object. After such an error the reader stands at the
    /// next line. Messages never copy more than a short excerpt of the line.
    bool next(nlohmann::json& record);
    /// SHA-256 of the whole file (LineReader::sha256()); after the last next().
    std::string sha256() { return lines_.sha256(); }
    std::size_t line_number() const { return lines_.line_number(); }
    const std::string& path() const { return lines_.path(); }
    const LineReader& lines() const { return lines_; }

private:
    LineReader lines_;
    std::string line_;
};


}  // namespace novelty
