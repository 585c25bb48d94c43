#include "corpus/import/read_sources.hpp"

#include "io/jsonl.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <tuple>

namespace novelty::import_detail {

namespace fs = std::filesystem;

namespace {



/// Binds one staging row: the paper, where it was read, and its place among accepted records.
void bind_paper(SqliteStatement& insert, const Paper& paper, std::size_t file_index, std::size_t line,
                std::size_t input_row) {
    insert.bind(1, paper.id);
    insert.bind(2, paper.title);
    insert.bind(3, paper.abstract);
    if (paper.date.empty()) insert.bind_null(4); else insert.bind(4, paper.date);
    if (paper.sort_date.empty()) insert.bind_null(5); else insert.bind(5, paper.sort_date);
    if (paper.year) insert.bind(6, static_cast<std::int64_t>(*paper.year)); else insert.bind_null(6);
    if (paper.field.empty()) insert.bind_null(7); else insert.bind(7, paper.field);
    if (paper.venue.empty()) insert.bind_null(8); else insert.bind(8, paper.venue);
    insert.bind(9, paper.citations);
    insert.bind(10, paper.extra_json);
    insert.bind(11, static_cast<std::int64_t>(file_index));
    insert.bind(12, static_cast<std::int64_t>(line));
    insert.bind(13, static_cast<std::int64_t>(input_row));
    std::string aliases;
    for (const auto& alias : paper.aliases) aliases += alias + "\n";
    insert.bind(14, aliases);
}

/// The next record of `reader` into `record`, or false at the end of the file. A record that
/// does not parse goes to `skip` (which throws unless invalid records are skipped); a file that
/// cannot be read throws, since skipping cannot help.
bool next_record(JsonlReader& reader, nlohmann::json& record, const std::function<void(const InputError&)>& skip) {
    for (;;) {
        try {
            return reader.next(record);
        } catch (const InputError& error) {
            if (error.line() == 0 || error.problem().rfind("read error", 0) == 0 ||
                error.problem().rfind("corrupt", 0) == 0 || error.problem().rfind("compressed", 0) == 0)
                throw;
            skip(error);
        }
    }
}

// Adds papers to the staging table, and removes them (PubMed deletions), keeping the counts.
class Stager {
public:
    Stager(SqliteDb& db, const ImportOptions& options, Reading& reading)
        : db_(db),
          options_(options),
          reading_(reading),
          insert_(db.prepare("INSERT INTO staging.staging (id, title, abstract, date, sort_date, year, field, venue, "
                             "citations, extra, src_file, src_line, input_row, aliases) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
          where_(db.prepare("SELECT src_file, src_line, title, abstract, coalesce(date, ''), coalesce(field, ''), "
                            "coalesce(venue, ''), citations, extra FROM staging.staging WHERE id = ?")),
          remove_(db.prepare("DELETE FROM staging.staging WHERE id = ?")) {
        if (reading.base_in_main) {
            base_find_.emplace(db.prepare(
                "SELECT d.key, d.title, d.abstract, coalesce(d.date, ''), coalesce(d.field, ''), coalesce(d.venue, ''), "
                "d.citations, d.extra FROM main.paper_data d WHERE d.id = ?1 "
                "AND NOT EXISTS (SELECT 1 FROM staging.removed r WHERE r.key = d.key)"));
            base_remove_.emplace(db.prepare("INSERT INTO staging.removed (key) VALUES (?)"));
            record_revised_.emplace(db.prepare(
                "INSERT OR IGNORE INTO staging.base_revised SELECT d.id, r.row, r.input_row, 0, d.title, d.abstract, "
                "d.date, d.field, d.venue, d.citations, d.extra FROM main.paper_data d JOIN main.paper_rows r "
                "ON r.key = d.key WHERE d.key = ?"));
        } else {
            record_revised_.emplace(db.prepare(
                "INSERT OR IGNORE INTO staging.base_revised SELECT id, src_line, input_row, 0, title, abstract, date, "
                "field, venue, citations, extra FROM staging.staging WHERE id = ? AND src_file < 0"));
        }
    }

    /// Stages `paper`, read at file_index:line. A repeated id is an identical copy (dropped), a
    /// revision when `revisions` and the earlier record came from an earlier file (replaced),
    /// and an InputError otherwise.
    void add(const Paper& paper, SourceInfo& info, std::size_t file_index, std::size_t line, bool revisions) {
        const std::string& path = options_.sources[file_index].path;
        check_stored_text(paper, path, line);
        if (base_find_ && !replace_in_base(paper, path, line)) {
            ++info.duplicates;
            ++reading_.duplicates;
            return;
        }
        bind_paper(insert_, paper, file_index, line, reading_.next_input_row);
        try {
            insert_.step();
            insert_.reset();
        } catch (const SqliteConstraint&) {
            insert_.reset();
            const auto [first, identical, first_file] = earlier_copy(paper);
            // A record of the base corpus (corpus add) is replaced by any different later one.
            const bool from_base = first_file < 0;
            if (!identical && (from_base || (revisions && first_file < static_cast<std::int64_t>(file_index)))) {
                if (from_base) record_revised(paper.id);
                erase(paper.id);  // a later file's version replaces the earlier one
                ++reading_.revised;
                --reading_.accepted;
                add(paper, info, file_index, line, revisions);
                return;
            }
            if (!identical)
                throw InputError(path, line, "duplicate id " + quote_value(paper.id) + " (first seen at " + first + ")");
            // The same record twice: keeping one loses nothing.
            ++info.duplicates;
            ++reading_.duplicates;
            if (options_.on_duplicate)
                options_.on_duplicate(SkippedRecord{path, line, "identical copy of the record at " + first + " dropped"});
            return;
        }
        ++info.records;
        ++reading_.accepted;
        ++reading_.next_input_row;
    }

    /// Removes the paper `id` (a PubMed DeleteCitation at file_index:line); InputError when no
    /// earlier record has it.
    void remove(const std::string& id, std::size_t file_index, std::size_t line) {
        if (!erase(id) && !(base_find_ && erase_in_base(id)))
            throw InputError(options_.sources[file_index].path, line,
                             "DeleteCitation names PMID " + quote_value(id) +
                                 ", which no earlier record holds (import the files in their published order, "
                                 "baseline first)");
        ++reading_.deleted;
        --reading_.accepted;
    }

private:
    /// With the base corpus in the main schema (incremental add): a paper of the base with
    /// `paper`'s id is replaced when `paper` differs (true: stage it), or `paper` is an
    /// identical copy of it (false: dropped, as a copy of a staged base paper is).
    bool replace_in_base(const Paper& paper, const std::string& path, std::size_t line) {
        SqliteStatement& q = *base_find_;
        q.bind(1, paper.id);
        if (!q.step()) {
            q.reset();
            return true;
        }
        const std::int64_t key = q.column_int(0);
        const bool identical = q.column_text(1) == paper.title && q.column_text(2) == paper.abstract &&
                               q.column_text(3) == paper.date && q.column_text(4) == paper.field &&
                               q.column_text(5) == paper.venue &&
                               (q.column_is_null(6) ? !paper.citations : paper.citations && *paper.citations == q.column_int(6)) &&
                               q.column_text(7) == paper.extra_json;
        q.reset();
        if (identical) {
            if (options_.on_duplicate)
                options_.on_duplicate(SkippedRecord{path, line, "identical copy of the record at the corpus dropped"});
            return false;
        }
        record_revised(key);
        mark_removed(key);
        ++reading_.revised;
        --reading_.accepted;
        return true;
    }

    /// Keeps the base paper that a staged record revises (its row and record) in
    /// staging.base_revised: by key (the base in the main schema) or by id (the base staged).
    template <class Key>
    void record_revised(const Key& key) {
        record_revised_->bind(1, key);
        record_revised_->step();
        record_revised_->reset();
    }

    /// Removes the base paper `id` (not yet removed); false when the base has none.
    bool erase_in_base(const std::string& id) {
        SqliteStatement& q = *base_find_;
        q.bind(1, id);
        const bool found = q.step();
        const std::int64_t key = found ? q.column_int(0) : -1;
        q.reset();
        if (found) mark_removed(key);
        return found;
    }

    void mark_removed(std::int64_t key) {
        base_remove_->bind(1, key);
        base_remove_->step();
        base_remove_->reset();
    }

    bool erase(const std::string& id) {
        remove_.bind(1, id);
        remove_.step();
        remove_.reset();
        return sqlite3_changes(db_.handle()) > 0;
    }

    /// Where the staged record with `paper`'s id came from ("FILE:LINE"), whether it is an
    /// identical copy of `paper`, and its file's index (-1: the base corpus).
    std::tuple<std::string, bool, std::int64_t> earlier_copy(const Paper& paper) {
        where_.bind(1, paper.id);
        std::string first = "earlier";
        bool identical = false;
        std::int64_t first_file = 0;
        if (where_.step()) {
            first_file = where_.column_int(0);
            first = first_file < 0 ? std::string("the corpus")
                                   : options_.sources[static_cast<std::size_t>(first_file)].path + ":" +
                                         std::to_string(where_.column_int(1));
            identical = where_.column_text(2) == paper.title && where_.column_text(3) == paper.abstract &&
                        where_.column_text(4) == paper.date && where_.column_text(5) == paper.field &&
                        where_.column_text(6) == paper.venue &&
                        (where_.column_is_null(7) ? !paper.citations
                                                  : paper.citations && *paper.citations == where_.column_int(7)) &&
                        where_.column_text(8) == paper.extra_json;
        }
        where_.reset();
        return {first, identical, first_file};
    }

    SqliteDb& db_;
    const ImportOptions& options_;
    Reading& reading_;
    SqliteStatement insert_, where_, remove_;
    std::optional<SqliteStatement> base_find_, base_remove_;  ///< incremental add only
    std::optional<SqliteStatement> record_revised_;
};

/// What reading one file needs: the options, the counts, the stager and the s2 side tables.
struct FileReading {
    const ImportOptions& options;
    Reading& reading;
    Stager& stager;
    S2Join* s2;  ///< null unless a source is in the s2 format
    ImportProgress& progress;
    std::size_t file_index;
    SourceInfo& info;

    void skip_or_throw(const InputError& error) {
        if (!options.skip_invalid) throw error;
        SkippedRecord skip{error.file(), error.line(), error.problem()};
        ++info.skipped;
        ++reading.skipped;
        if (reading.skipped_first.size() < max_listed_skips) reading.skipped_first.push_back(skip);
        if (options.on_skip) options.on_skip(skip);
    }
    void report(std::uint64_t bytes_read) {
        if (!options.on_progress) return;
        progress.records = reading.accepted;
        progress.bytes_read = bytes_read;
        options.on_progress(progress);
    }
};

// One JSON record of a JSON Lines source: a paper, or (s2) an abstract or a vector.
void read_record(FileReading& r, const ImportSource& source, const nlohmann::json& record, std::size_t line) {
    if (source.format == ImportFormat::s2) {
        const auto kind = s2_record_kind(record);
        if (kind != S2Kind::paper) {
            if (r.s2->stage(kind, record, r.file_index, line)) {
                ++r.info.records;
            } else {
                ++r.info.duplicates;
                ++r.reading.duplicates;
            }
            return;
        }
    }
    Paper paper = paper_from_record(source.format, record, source.path, line, source.field);
    r.stager.add(paper, r.info, r.file_index, line, false);
}

void read_jsonl_file(FileReading& r, const ImportSource& source) {
    JsonlReader reader(source.path);
    r.progress.file_bytes = reader.lines().file_size();
    nlohmann::json record;
    auto skip = [&](const InputError& error) { r.skip_or_throw(error); };
    while (next_record(reader, record, skip)) {
        try {
            read_record(r, source, record, reader.line_number());
        } catch (const InputError& error) {
            r.skip_or_throw(error);
        }
        if ((r.info.records + r.info.skipped) % progress_every == 0) r.report(reader.lines().bytes_read());
    }
    r.info.sha256 = reader.sha256();
}

void read_pubmed_file(FileReading& r, const ImportSource& source) {
    PubmedSink sink;
    sink.article = [&](Paper&& paper, std::size_t line) {
        try {
            if (!source.field.empty()) paper.field = source.field;
            r.stager.add(paper, r.info, r.file_index, line, true);
        } catch (const InputError& error) {
            r.skip_or_throw(error);
        }
    };
    sink.deletion = [&](const std::string& pmid, std::size_t line) {
        try {
            r.stager.remove(pmid, r.file_index, line);
            ++r.info.records;
        } catch (const InputError& error) {
            r.skip_or_throw(error);
        }
    };
    sink.skip = [&](const InputError& error) { r.skip_or_throw(error); };
    sink.progress = [&](std::uint64_t bytes, std::uint64_t total) {
        r.progress.file_bytes = total;
        r.report(bytes);
    };
    r.info.sha256 = read_pubmed(source.path, sink);
}

// The base corpus's papers as staged records of file -1 whose line is their old row.
void stage_base(SqliteDb& db, const std::string& base_dir, Reading& reading) {
    SqliteStatement attach = db.prepare("ATTACH DATABASE ? AS base");
    attach.bind(1, (fs::path(base_dir) / "papers.sqlite").string());
    attach.step();
    bool base_has_aliases = false;
    {
        auto q = db.prepare("SELECT count(*) FROM base.sqlite_master WHERE type IN ('table', 'view') AND name = 'aliases'");
        q.step();
        base_has_aliases = q.column_int(0) > 0;
    }
    // One pass over the aliases, grouped by row (the table is keyed by alias, not by row).
    const std::string aliases = base_has_aliases
                                    ? "LEFT JOIN (SELECT row, group_concat(alias, char(10)) || char(10) AS list "
                                      "FROM base.aliases GROUP BY row) a ON a.row = p.row"
                                    : "LEFT JOIN (SELECT NULL AS row, NULL AS list) a ON 0";
    db.exec("INSERT INTO staging.staging (id, title, abstract, date, sort_date, year, field, venue, citations, extra, "
            "src_file, src_line, input_row, aliases) SELECT p.id, p.title, p.abstract, p.date, p.sort_date, p.year, "
            "p.field, p.venue, p.citations, p.extra, -1, p.row, row_number() OVER (ORDER BY p.input_row) - 1, "
            "coalesce(a.list, '') FROM base.papers p " + aliases);
    auto count = db.prepare("SELECT count(*) FROM staging.staging");
    count.step();
    reading.next_input_row = static_cast<std::size_t>(count.column_int(0));
    reading.accepted = reading.next_input_row;
    db.exec("DETACH DATABASE base");
}

// Incremental add: the base corpus is the main schema; its papers count as accepted records
// (input rows 0 .. N-1) and those replaced or deleted are listed in staging.removed.
void start_on_main(SqliteDb& db, Reading& reading) {
    db.exec("CREATE TABLE staging.removed (key INTEGER PRIMARY KEY)");
    auto count = db.prepare("SELECT count(*) FROM main.paper_rows");
    count.step();
    reading.base_in_main = true;
    reading.next_input_row = static_cast<std::size_t>(count.column_int(0));
    reading.accepted = reading.next_input_row;
}

}  // namespace

Reading read_sources(const ImportOptions& options, SqliteDb& db, S2Join* s2, const std::string& base_dir,
                     bool base_in_main) {
    Reading reading;
    if (!base_dir.empty()) stage_base(db, base_dir, reading);
    if (base_in_main) start_on_main(db, reading);
    Stager stager(db, options, reading);
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "reading";
    db.exec("BEGIN");
    for (std::size_t file_index = 0; file_index < options.sources.size(); ++file_index) {
        const ImportSource& source = options.sources[file_index];
        // Read once (pipes and FIFOs cannot be read twice): the checksum is taken on the way.
        SourceInfo info{source.path, import_format_name(source.format), source.field, std::string(), 0, 0, 0};
        progress.file_index = file_index;
        FileReading r{options, reading, stager, s2, progress, file_index, info};
        if (source.format == ImportFormat::pubmed) read_pubmed_file(r, source);
        else read_jsonl_file(r, source);
        if (info.records == 0 && info.skipped == 0 && info.duplicates == 0) throw InputError(source.path, 0, "the file holds no records");
        reading.sources.push_back(info);
        r.report(progress.file_bytes);
    }
    db.exec("COMMIT");
    return reading;
}

// After s2 joins and PubMed deletions: problems are skipped or thrown, input rows renumbered
// without gaps, and a corpus with no papers refused.
void finish_reading(const ImportOptions& options, SqliteDb& db, S2Join* s2, Reading& reading) {
    if (s2) {
        s2->join([&](std::size_t file_index, const InputError& error) {
            if (!options.skip_invalid) throw error;
            SkippedRecord skip{error.file(), error.line(), error.problem()};
            ++reading.sources[file_index].skipped;
            ++reading.skipped;
            if (reading.skipped_first.size() < max_listed_skips) reading.skipped_first.push_back(skip);
            if (options.on_skip) options.on_skip(skip);
        });
        // Records the join found identical to the corpus's papers: copies, not revisions.
        reading.revised -= s2->n_identical_revisions();
        reading.duplicates += s2->identical_dropped().size();
        if (options.on_duplicate)
            for (const SkippedRecord& note : s2->identical_dropped()) options.on_duplicate(note);
    }
    auto count = db.prepare(reading.base_in_main ? "SELECT (SELECT count(*) FROM staging.staging) + "
                                                   "(SELECT count(*) FROM main.paper_rows) - (SELECT count(*) FROM staging.removed)"
                                                 : "SELECT count(*) FROM staging.staging");
    count.step();
    reading.accepted = static_cast<std::size_t>(count.column_int(0));
    // (incremental add: the input rows of old and new papers are numbered when rows are)
    if (reading.accepted != reading.next_input_row && !reading.base_in_main)
        db.exec(R"sql(
            UPDATE staging.staging SET input_row = r.n
            FROM (SELECT id, row_number() OVER (ORDER BY input_row) - 1 AS n FROM staging.staging) r
            WHERE r.id = staging.id;)sql");
    if (reading.accepted == 0)
        throw InputError(options.sources.size() == 1 ? options.sources[0].path : "the input files", 0,
                         "no valid records: every record was skipped or deleted, and a corpus cannot be empty");
}

}  // namespace novelty::import_detail
