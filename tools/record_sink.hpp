// Where a command's per-record results go: a table on stdout, or OUT as JSON Lines or CSV, written
// through OUT.partial as records are made and resumable with --resume (host::ResumableOutput).
#pragma once

#include "novelty_host/jobs/resumable_output.hpp"

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace novelty::cli {

/// The finished ids of an output that has none (a table, or no resumable file): one empty set.
const std::set<std::string>& no_finished_ids();

class RecordSink {
public:
    enum class Kind { table, jsonl, csv };

    /// A table on stdout when `out` is "" (`table_header` printed first), else OUT in `kind`
    /// (jsonl or csv, `csv_header` heading a CSV file; a JSON Lines record's id under `id_key`).
    /// An existing OUT.partial without `resume` is a UsageError.
    RecordSink(const std::string& out, Kind kind, bool resume, const std::string& table_header = "",
               const std::string& csv_header = "", const std::string& id_key = "id");

    Kind kind() const { return kind_; }
    /// Ids finished by an earlier, interrupted run (empty for a table).
    const std::set<std::string>& done() const;
    /// One record's line, without a newline.
    void write(const std::string& id, const std::string& line);
    /// The records of `ids` at once: `lines` holds one line per id (for a table, any text), in
    /// that order, each ending with '\n'.
    void write_lines(const std::vector<std::string>& ids, std::string_view lines);
    /// Puts OUT in place with the records in the order of `ids`; returns the records written
    /// (0 for a table).
    std::size_t finish(const std::vector<std::string>& ids);

private:
    Kind kind_;
    std::unique_ptr<host::ResumableOutput> file_;
};

}  // namespace novelty::cli
