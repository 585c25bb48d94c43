// Results written as they are made and put in input order at the end: records go to OUT.partial
// (complete lines, flushed), and finish() puts OUT in place atomically in the order of the input
// ids and removes OUT.partial. With resume, the records already in OUT.partial count as done; a
// line cut short by a crash is dropped. JSON Lines records are objects whose id is a string under
// a key (`id_key`: "id", or "query" for search and retrieval results; records holding an "error"
// key are dropped and redone); CSV records start with the id field, under one header line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace novelty::host {

class ResumableOutput {
public:
    enum class Format { jsonl, csv };

    /// Opens OUT.partial. An existing OUT.partial without `resume` is a UsageError (it holds an
    /// interrupted run). `csv_header` (without a newline) heads a CSV file and its partial;
    /// `id_key` names the id's key in a JSON Lines record.
    ResumableOutput(std::string out_path, bool resume, Format format = Format::jsonl, std::string csv_header = "",
                    std::string id_key = "id");
    ~ResumableOutput();
    ResumableOutput(const ResumableOutput&) = delete;
    ResumableOutput& operator=(const ResumableOutput&) = delete;

    /// Ids finished by an earlier run.
    const std::set<std::string>& done() const { return done_; }
    /// Appends one record (its line, without a newline) and flushes it.
    void write(const std::string& id, const std::string& line);
    /// Appends the records of `ids` at once: `lines` holds one line per id, in that order, each
    /// ending with '\n'; one write and one flush. Throws Error when the line count differs.
    void write_lines(const std::vector<std::string>& ids, std::string_view lines);
    /// Writes OUT with every record, in the order of `ids` (ids without a record are skipped,
    /// records of other ids go last, in the order they were written; of an id written twice the
    /// last line counts), and removes OUT.partial. When OUT.partial already holds exactly the
    /// records of `ids` in that order, it is renamed to OUT (no second copy of the data).
    /// Returns the records written.
    std::size_t finish(const std::vector<std::string>& ids);

private:
    struct Span {
        std::uint64_t offset = 0;  ///< where the line starts in OUT.partial
        std::uint64_t size = 0;    ///< its length without the newline
    };
    /// The id of a complete line of OUT.partial, or nullopt when it is not a finished record.
    std::optional<std::string> record_id(const std::string& line) const;
    /// Keeps the finished records of an earlier run's OUT.partial; returns its kept bytes.
    std::string resume_partial();
    void append(std::string_view bytes);
    void record(const std::string& id, std::uint64_t offset, std::uint64_t size);
    bool partial_is_in_order(const std::vector<std::string>& ids) const;

    std::string out_;
    std::string partial_;
    Format format_;
    std::string header_;  ///< CSV header line with its newline, "" for JSON Lines
    std::string id_key_;
    std::set<std::string> done_;
    std::unordered_map<std::string, Span> records_;  ///< id -> its last line in OUT.partial
    std::vector<std::string> order_;                 ///< ids in the order of their lines
    std::FILE* file_ = nullptr;
    std::uint64_t size_ = 0;  ///< bytes in OUT.partial
};

}  // namespace novelty::host
