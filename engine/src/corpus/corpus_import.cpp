// novelty corpus import: sources -> staging table -> date-ordered papers table + FTS5 index ->
// manifest, built in a temporary sibling directory and renamed into place when complete.
#include "corpus/corpus_recovery.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"
#include "corpus/import/record_fields.hpp"
#include "io/jsonl.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "corpus/sqlite_db.hpp"

#include <algorithm>
#include <functional>
#include <csignal>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace novelty {

namespace fs = std::filesystem;

ImportFormat parse_import_format(const std::string& name) {
    if (name == "jsonl") return ImportFormat::jsonl;
    if (name == "arxiv") return ImportFormat::arxiv;
    if (name == "openalex") return ImportFormat::openalex;
    if (name == "paperlists") return ImportFormat::paperlists;
    throw UsageError("unknown import format '" + name + "' (expected jsonl, arxiv, openalex or paperlists)");
}

const char* import_format_name(ImportFormat format) {
    switch (format) {
        case ImportFormat::jsonl: return "jsonl";
        case ImportFormat::arxiv: return "arxiv";
        case ImportFormat::openalex: return "openalex";
        case ImportFormat::paperlists: return "paperlists";
    }
    return "?";
}

namespace {

constexpr std::size_t progress_every = 2000;
constexpr std::size_t max_listed_skips = 100;
constexpr std::size_t max_listed_venues = 50;

// The temporary build directory; removed unless committed.
class WorkDir {
public:
    explicit WorkDir(const fs::path& out) {
        path_ = out.parent_path() / (out.filename().string() + ".importing-" + std::to_string(::getpid()));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~WorkDir() {
        if (!committed_) {
            std::error_code ec;
            fs::remove_all(path_, ec);
        }
    }
    const fs::path& path() const { return path_; }
    void committed() { committed_ = true; }

private:
    fs::path path_;
    bool committed_ = false;
};

// True for the names a corpus folder holds: its files, their SQLite journals, caches, an
// interrupted embedding run and temporary siblings of any of these.
bool is_corpus_entry(const std::string& name) {
    static const char* const known[] = {"manifest.json", "papers.sqlite", "papers.sqlite-journal", "papers.sqlite-wal",
                                        "papers.sqlite-shm", "vectors.npy", "cache", "embed.partial.f32",
                                        "embed.partial.json", "embed.partial.npy"};
    for (const char* k : known) {
        const std::string base(k);
        if (name == base || name.rfind(base + ".tmp-", 0) == 0) return true;
    }
    return false;
}

// --overwrite replaces the whole folder, so it must hold nothing but a corpus.
void check_only_corpus_files(const fs::path& out) {
    std::vector<std::string> foreign;
    std::error_code ec;
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_corpus_entry(name)) foreign.push_back(name);
    }
    if (ec) throw Error(out.string() + ": cannot list: " + ec.message());
    if (foreign.empty()) return;
    std::sort(foreign.begin(), foreign.end());
    std::string listed;
    for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) listed += (i ? ", " : "") + foreign[i];
    if (foreign.size() > 5) listed += ", ... (" + std::to_string(foreign.size()) + " in all)";
    throw UsageError(out.string() + " holds files that are not part of a corpus (" + listed +
                     "); overwriting replaces the whole folder, so move them elsewhere first",
                     "overwrite");
}

void check_options(const ImportOptions& options, const fs::path& out) {
    if (options.sources.empty()) throw UsageError("no input files: give at least one", "in");
    if (options.out_dir.empty()) throw UsageError("no output directory: give one", "out");
    for (const auto& source : options.sources) {
        std::error_code ec;
        if (!fs::exists(source.path, ec)) throw InputError(source.path, 0, "no such file");
        if (fs::is_directory(source.path, ec)) throw InputError(source.path, 0, "is a directory, not a file");
    }
    std::error_code ec;
    if (fs::exists(out, ec)) {
        if (!options.overwrite)
            throw UsageError(options.out_dir + " already exists; choose another output directory, or allow overwriting to "
                                               "replace the corpus there",
                             "overwrite");
        if (!fs::is_directory(out, ec) || !fs::exists(out / "manifest.json", ec))
            throw UsageError(options.out_dir + " exists and is not a corpus (no manifest.json); refusing to replace it");
        check_only_corpus_files(out);
    }
}

void create_schema(SqliteDb& db) {
    db.exec(R"sql(
        PRAGMA journal_mode = OFF;
        PRAGMA synchronous = OFF;
        PRAGMA temp_store = FILE;
        PRAGMA cache_size = -65536;
        CREATE TABLE staging.staging (
            id TEXT NOT NULL PRIMARY KEY, title TEXT NOT NULL, abstract TEXT NOT NULL, date TEXT,
            sort_date TEXT, year INTEGER, field TEXT, venue TEXT, citations INTEGER, extra TEXT NOT NULL,
            src_file INTEGER NOT NULL, src_line INTEGER NOT NULL, input_row INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE papers (
            row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, abstract TEXT NOT NULL,
            date TEXT, sort_date TEXT, year INTEGER, field TEXT, venue TEXT, citations INTEGER,
            extra TEXT NOT NULL, input_row INTEGER NOT NULL);
    )sql");
}

struct Reading {
    std::vector<SourceInfo> sources;
    std::size_t accepted = 0;
    std::size_t skipped = 0;
    std::size_t duplicates = 0;
    std::vector<SkippedRecord> skipped_first;
};

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
}

/// Where the staged record with `paper`'s id came from ("FILE:LINE", or "earlier"), and whether
/// it is an identical copy of `paper`.
std::pair<std::string, bool> earlier_copy(SqliteStatement& where, const Paper& paper, const ImportOptions& options) {
    where.bind(1, paper.id);
    std::string first = "earlier";
    bool identical = false;
    if (where.step()) {
        first = options.sources[static_cast<std::size_t>(where.column_int(0))].path + ":" +
                std::to_string(where.column_int(1));
        identical = where.column_text(2) == paper.title && where.column_text(3) == paper.abstract &&
                    where.column_text(4) == paper.date && where.column_text(5) == paper.field &&
                    where.column_text(6) == paper.venue &&
                    (where.column_is_null(7) ? !paper.citations
                                             : paper.citations && *paper.citations == where.column_int(7)) &&
                    where.column_text(8) == paper.extra_json;
    }
    where.reset();
    return {first, identical};
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

Reading read_sources(const ImportOptions& options, SqliteDb& db) {
    Reading reading;
    auto insert = db.prepare(
        "INSERT INTO staging.staging (id, title, abstract, date, sort_date, year, field, venue, citations, extra, "
        "src_file, src_line, input_row) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    auto where = db.prepare(
        "SELECT src_file, src_line, title, abstract, coalesce(date, ''), coalesce(field, ''), coalesce(venue, ''), "
        "citations, extra FROM staging.staging WHERE id = ?");
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "reading";
    db.exec("BEGIN");
    for (std::size_t file_index = 0; file_index < options.sources.size(); ++file_index) {
        const ImportSource& source = options.sources[file_index];
        // Read once (pipes and FIFOs cannot be read twice): the checksum is taken on the way.
        SourceInfo info{source.path, import_format_name(source.format), source.field, std::string(), 0, 0, 0};
        JsonlReader reader(source.path);
        progress.file_index = file_index;
        progress.file_bytes = reader.lines().file_size();
        nlohmann::json record;
        auto skip_or_throw = [&](const InputError& error) {
            if (!options.skip_invalid) throw error;
            SkippedRecord skip{error.file(), error.line(), error.problem()};
            ++info.skipped;
            ++reading.skipped;
            if (reading.skipped_first.size() < max_listed_skips) reading.skipped_first.push_back(skip);
            if (options.on_skip) options.on_skip(skip);
        };
        while (next_record(reader, record, skip_or_throw)) {
            const std::size_t line = reader.line_number();
            try {
                Paper paper = import_detail::paper_from_record(source.format, record, source.path, line, source.field);
                bind_paper(insert, paper, file_index, line, reading.accepted);
                try {
                    insert.step();
                } catch (const SqliteConstraint&) {
                    insert.reset();
                    const auto [first, identical] = earlier_copy(where, paper, options);
                    if (!identical)
                        throw InputError(source.path, line, "duplicate id " + quote_value(paper.id) + " (first seen at " + first + ")");
                    // The same record twice: keeping one loses nothing.
                    ++info.duplicates;
                    ++reading.duplicates;
                    if (options.on_duplicate)
                        options.on_duplicate(SkippedRecord{source.path, line,
                                                           "identical copy of the record at " + first + " dropped"});
                    continue;
                }
                insert.reset();
                ++info.records;
                ++reading.accepted;
            } catch (const InputError& error) {
                skip_or_throw(error);
            }
            if (options.on_progress && (info.records + info.skipped) % progress_every == 0) {
                progress.records = reading.accepted;
                progress.bytes_read = reader.lines().bytes_read();
                options.on_progress(progress);
            }
        }
        info.sha256 = reader.sha256();
        if (info.records == 0 && info.skipped == 0 && info.duplicates == 0) throw InputError(source.path, 0, "the file holds no records");
        reading.sources.push_back(info);
        progress.records = reading.accepted;
        progress.bytes_read = progress.file_bytes;
        if (options.on_progress) options.on_progress(progress);
    }
    db.exec("COMMIT");
    if (reading.accepted == 0)
        throw InputError(options.sources.size() == 1 ? options.sources[0].path : "the input files", 0,
                         "no valid records: every record was skipped, and a corpus cannot be empty");
    return reading;
}

void order_and_index(SqliteDb& db, const ImportOptions& options) {
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "ordering";
    if (options.on_progress) options.on_progress(progress);
    db.exec(R"sql(
        BEGIN;
        INSERT INTO papers (row, id, title, abstract, date, sort_date, year, field, venue, citations, extra, input_row)
        SELECT row_number() OVER (ORDER BY sort_date IS NULL, sort_date, id) - 1,
               id, title, abstract, date, sort_date, year, field, venue, citations, extra, input_row
        FROM staging.staging ORDER BY sort_date IS NULL, sort_date, id;
        CREATE INDEX papers_sort_date ON papers (sort_date);
        COMMIT;
    )sql");
    progress.stage = "indexing";
    if (options.on_progress) options.on_progress(progress);
    db.exec(R"sql(
        CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, content='papers', content_rowid='row');
        INSERT INTO papers_fts (papers_fts) VALUES ('rebuild');
    )sql");
}

void fill_stats(SqliteDb& db, CorpusManifest& m) {
    auto one = [&](const std::string& sql) {
        auto q = db.prepare(sql);
        q.step();
        return q;
    };
    m.count = static_cast<std::size_t>(one("SELECT count(*) FROM papers").column_int(0));
    m.n_dated = static_cast<std::size_t>(one("SELECT count(*) FROM papers WHERE sort_date IS NOT NULL").column_int(0));
    m.n_with_citations = static_cast<std::size_t>(one("SELECT count(*) FROM papers WHERE citations IS NOT NULL").column_int(0));
    if (m.n_dated > 0) {
        m.date_min = one("SELECT date FROM papers WHERE sort_date IS NOT NULL ORDER BY row LIMIT 1").column_text(0);
        m.date_max = one("SELECT date FROM papers WHERE sort_date IS NOT NULL ORDER BY row DESC LIMIT 1").column_text(0);
    }
    auto counts = [&](const std::string& column, std::size_t limit) {
        std::vector<NameCount> out;
        auto q = db.prepare("SELECT " + column + ", count(*) AS n FROM papers WHERE " + column +
                            " IS NOT NULL GROUP BY " + column + " ORDER BY n DESC, " + column + " LIMIT ?");
        q.bind(1, static_cast<std::int64_t>(limit));
        while (q.step()) out.push_back({q.column_text(0), static_cast<std::size_t>(q.column_int(1))});
        return out;
    };
    m.fields = counts("field", 1000000);
    m.venues = counts("venue", max_listed_venues);
    m.n_venues = static_cast<std::size_t>(one("SELECT count(DISTINCT venue) FROM papers").column_int(0));
}

}  // namespace

ImportSummary import_corpus(const ImportOptions& options) {
    if (options.out_dir.empty()) throw UsageError("no output directory: give one", "out");
    const fs::path out = corpus_dir_path(options.out_dir);
    recover_interrupted_import(out);
    check_options(options, out);
    fs::create_directories(out.parent_path());
    WorkDir work(out);
    const std::string db_path = (work.path() / "papers.sqlite").string();
    const std::string staging_path = (work.path() / "staging.sqlite").string();

    CorpusManifest manifest;
    Reading reading;
    {
        SqliteDb db(db_path, SqliteDb::Mode::read_write_create);
        SqliteStatement attach = db.prepare("ATTACH DATABASE ? AS staging");
        attach.bind(1, staging_path);
        attach.step();
        create_schema(db);
        reading = read_sources(options, db);
        order_and_index(db, options);
        db.exec("DETACH DATABASE staging");
        fs::remove(staging_path);
        fill_stats(db, manifest);
        db.exec("PRAGMA journal_mode = DELETE");
    }
    kill_point("import:papers-written");
    ImportProgress finishing;
    finishing.stage = "finishing";
    finishing.records = reading.accepted;
    if (options.on_progress) options.on_progress(finishing);

    fsync_path(db_path);
    manifest.sources = reading.sources;
    manifest.n_skipped = reading.skipped;
    manifest.n_duplicates = reading.duplicates;
    manifest.skipped = reading.skipped_first;
    manifest.papers_sha256 = sha256_file(db_path);
    manifest.papers_fingerprint = file_fingerprint(db_path);
    manifest.created = utc_now_iso8601();
    manifest.input_order_recorded = true;
    write_manifest(work.path().string(), manifest);  // the manifest is what makes a corpus complete
    fsync_path(work.path().string());

    kill_point("import:built");
    if (fs::exists(out)) {
        // A kill between these steps is repaired by recover_interrupted_import() on the next
        // open or import: the new corpus completed, or the old one restored.
        const fs::path old = out.parent_path() / (out.filename().string() + ".replaced-" + std::to_string(::getpid()));
        fs::rename(out, old);
        kill_point("import:between-renames");
        fs::rename(work.path(), out);
        work.committed();
        kill_point("import:before-removing-old");
        fs::remove_all(old);
    } else {
        fs::rename(work.path(), out);
        work.committed();
    }
    fsync_path(out.parent_path().string());
    return ImportSummary{reading.accepted, reading.skipped, reading.duplicates, out.string()};
}

}  // namespace novelty
