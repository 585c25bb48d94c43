// Results written as they are made and put in input order at the end: records go to OUT.partial
// (one complete line each, flushed), and finish() writes OUT atomically in the order of the input
// ids and removes OUT.partial. With resume, the records already in OUT.partial count as done; a
// line cut short by a crash is dropped. JSON Lines records are objects with an "id" (those
// holding an "error" key are dropped and redone); CSV records start with the id field, under one
// header line.
#pragma once

#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace novelty::host {

class ResumableOutput {
public:
    enum class Format { jsonl, csv };

    /// Opens OUT.partial. An existing OUT.partial without `resume` is a UsageError (it holds an
    /// interrupted run). `csv_header` (without a newline) heads a CSV file and its partial.
    ResumableOutput(std::string out_path, bool resume, Format format = Format::jsonl, std::string csv_header = "");

    /// Ids finished by an earlier run.
    const std::set<std::string>& done() const { return done_; }
    /// Appends one record (a JSON object with an "id") and flushes it.
    void write(const std::string& id, const std::string& json_line);
    /// Writes OUT with every record, in the order of `ids` (ids without a record are skipped,
    /// records of other ids go last), and removes OUT.partial. Returns the records written.
    std::size_t finish(const std::vector<std::string>& ids);

private:
    /// The id of a complete line of OUT.partial, or nullopt when it is not a finished record.
    std::optional<std::string> record_id(const std::string& line) const;

    std::string out_;
    std::string partial_;
    Format format_;
    std::string header_;  ///< CSV header line with its newline, "" for JSON Lines
    std::set<std::string> done_;
    std::map<std::string, std::string> records_;  ///< id -> line (the last one wins)
    std::ofstream stream_;
};

}  // namespace novelty::host
