// JSON Lines reading: one JSON object per line; blank lines are skipped. Every error names the
// file and the line. Internal to the engine (public headers carry no JSON types).
#pragma once

#include "text_lines.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace novelty {

class JsonlReader {
public:
    explicit JsonlReader(const std::string& path) : lines_(path) {}

    /// Reads the next object into `record`. Returns false at end of file. Throws InputError
    /// naming file and line for invalid UTF-8 (with the byte's column), malformed JSON, or a
    /// line whose value is not a JSON object.
    bool next(nlohmann::json& record);
    std::size_t line_number() const { return lines_.line_number(); }
    const std::string& path() const { return lines_.path(); }
    const LineReader& lines() const { return lines_; }

private:
    LineReader lines_;
    std::string line_;
};

/// A JSON value's type in words, for messages: "a string", "a number", "null", ...
std::string json_type_words(const nlohmann::json& value);

}  // namespace novelty
