// novelty corpus import: sources -> staging table -> date-ordered papers table + FTS5 index ->
// manifest, built in a temporary sibling directory and renamed into place when complete.
#include "corpus/corpus_recovery.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"
#include "corpus/import/record_fields.hpp"
#include "io/jsonl.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "util/message_text.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "corpus/sqlite_db.hpp"
#include "corpus/import/s2_join.hpp"
#include "corpus/import/import_build.hpp"
#include "corpus/import/read_sources.hpp"
#include "corpus/import/papers_layout.hpp"
#include "corpus/import/papers_incremental.hpp"
#include "corpus/citations/citation_table.hpp"
#include "corpus/import/paper_inserted.hpp"
#include "corpus/add_in_place.hpp"
#include "corpus/corpus_lock.hpp"

#include <sqlite3.h>
#include <tuple>

#include <algorithm>
#include <functional>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <unistd.h>

namespace novelty {

namespace fs = std::filesystem;
using import_detail::Reading;
using import_detail::finish_reading;
using import_detail::read_sources;

ImportFormat parse_import_format(const std::string& name) {
    if (name == "jsonl") return ImportFormat::jsonl;
    if (name == "arxiv") return ImportFormat::arxiv;
    if (name == "openalex") return ImportFormat::openalex;
    if (name == "paperlists") return ImportFormat::paperlists;
    if (name == "s2") return ImportFormat::s2;
    if (name == "pubmed") return ImportFormat::pubmed;
    throw UsageError("unknown import format '" + name + "' (expected jsonl, arxiv, openalex, paperlists, s2 or pubmed)");
}

const char* import_format_name(ImportFormat format) {
    switch (format) {
        case ImportFormat::jsonl: return "jsonl";
        case ImportFormat::arxiv: return "arxiv";
        case ImportFormat::openalex: return "openalex";
        case ImportFormat::paperlists: return "paperlists";
        case ImportFormat::s2: return "s2";
        case ImportFormat::pubmed: return "pubmed";
    }
    return "?";
}

namespace {

constexpr std::size_t max_listed_venues = 50;

// The temporary build directory DIR.importing-PID; removed unless committed. It is locked
// (WorkFolderLock) from before it has its name until it is renamed to DIR, so that recovery
// (corpus_recovery.hpp) judges it, and the DIR.replaced-PID beside it, by that lock and never by
// the PID, which another process may have by then.
class WorkDir {
public:
    explicit WorkDir(const fs::path& out) {
        path_ = out.parent_path() / (out.filename().string() + ".importing-" + std::to_string(::getpid()));
        // A leftover under this name is a dead import's (recovery left it: it was not complete), unless
        // it is locked: a process with the same id in another container; then this one stops here.
        if (fs::exists(path_)) {
            const WorkFolderLock probe(path_);  // (throws when it is held)
        }
        fs::remove_all(path_);
        // Made and locked under a name recovery does not read, then named: no recovery sees it unlocked.
        const fs::path unnamed = path_.string() + ".new";
        fs::remove_all(unnamed);
        fs::create_directories(unnamed);
        lock_ = std::make_unique<WorkFolderLock>(unnamed);
        fs::rename(unnamed, path_);
    }
    ~WorkDir() {
        if (!committed_) {
            std::error_code ec;
            fs::remove_all(path_, ec);
        }
    }
    const fs::path& path() const { return path_; }
    /// Called once the folder was renamed to DIR: the lock is dropped (readers of DIR take it shared).
    void committed() {
        committed_ = true;
        lock_.reset();
    }

private:
    fs::path path_;
    std::unique_ptr<WorkFolderLock> lock_;
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

}  // namespace

namespace import_detail {

void check_import_options(const ImportOptions& options, const fs::path& out) {
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

}  // namespace import_detail

namespace {

// The staging table of the records read (the papers, and with a base, what replaces them).
void create_staging(SqliteDb& db) {
    db.exec(R"sql(
        PRAGMA journal_mode = OFF;
        PRAGMA synchronous = OFF;
        PRAGMA temp_store = FILE;
        PRAGMA cache_size = -65536;
        CREATE TABLE staging.staging (
            id TEXT NOT NULL PRIMARY KEY, title TEXT NOT NULL, abstract TEXT NOT NULL, date TEXT,
            sort_date TEXT, year INTEGER, field TEXT, venue TEXT, citations INTEGER, extra TEXT NOT NULL,
            src_file INTEGER NOT NULL, src_line INTEGER NOT NULL, input_row INTEGER NOT NULL,
            aliases TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE staging.base_revised (
            id TEXT NOT NULL PRIMARY KEY, old_row INTEGER NOT NULL, old_input INTEGER NOT NULL,
            revived INTEGER NOT NULL, title TEXT NOT NULL, abstract TEXT NOT NULL, date TEXT, field TEXT,
            venue TEXT, citations INTEGER, extra TEXT NOT NULL) WITHOUT ROWID;
    )sql");
}

void order_and_index(SqliteDb& db, const ImportOptions& options) {
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "ordering";
    if (options.on_progress) options.on_progress(progress);
    import_detail::create_papers_layout(db);
    import_detail::fill_papers_layout(db);
    progress.stage = "indexing";
    if (options.on_progress) options.on_progress(progress);
    import_detail::index_papers_layout(db);
}

}  // namespace

namespace import_detail {

void fill_corpus_stats(SqliteDb& db, CorpusManifest& m) {
    auto one = [&](const std::string& sql) {
        auto q = db.prepare(sql);
        q.step();
        return q;
    };
    // The paper records without the rows view where the order does not matter.
    const std::string papers = import_detail::has_keyed_layout(db) ? "paper_data" : "papers";
    m.count = static_cast<std::size_t>(one("SELECT count(*) FROM " + papers).column_int(0));
    m.n_dated = static_cast<std::size_t>(one("SELECT count(*) FROM " + papers + " WHERE sort_date IS NOT NULL").column_int(0));
    m.n_with_citations =
        static_cast<std::size_t>(one("SELECT count(*) FROM " + papers + " WHERE citations IS NOT NULL").column_int(0));
    if (m.n_dated > 0) {
        m.date_min = one("SELECT date FROM papers WHERE sort_date IS NOT NULL ORDER BY row LIMIT 1").column_text(0);
        m.date_max = one("SELECT date FROM papers WHERE sort_date IS NOT NULL ORDER BY row DESC LIMIT 1").column_text(0);
    }
    auto counts = [&](const std::string& column, std::size_t limit) {
        std::vector<NameCount> out;
        auto q = db.prepare("SELECT " + column + ", count(*) AS n FROM " + papers + " WHERE " + column +
                            " IS NOT NULL GROUP BY " + column + " ORDER BY n DESC, " + column + " LIMIT ?");
        q.bind(1, static_cast<std::int64_t>(limit));
        while (q.step()) out.push_back({q.column_text(0), static_cast<std::size_t>(q.column_int(1))});
        return out;
    };
    m.fields = counts("field", 1000000);
    m.venues = counts("venue", max_listed_venues);
    m.n_venues = static_cast<std::size_t>(one("SELECT count(DISTINCT venue) FROM " + papers).column_int(0));
}

// Attaches an empty staging database at `staging_path` to `db`, and starts the s2 join when a
// source is in the s2 format.
void attach_staging(SqliteDb& db, const std::string& staging_path, const ImportOptions& options,
                    std::optional<S2Join>& s2, const std::string& base_dir) {
    SqliteStatement attach = db.prepare("ATTACH DATABASE ? AS staging");
    attach.bind(1, staging_path);
    attach.step();
    create_staging(db);
    if (std::any_of(options.sources.begin(), options.sources.end(),
                    [](const ImportSource& s) { return s.format == ImportFormat::s2; }))
        s2.emplace(db, options.sources, base_dir);
}

}  // namespace import_detail

namespace {

// Per new row: its row in the base corpus (staged as file -1, line = old row), or -1.
std::vector<std::int64_t> old_rows_of_new(SqliteDb& db) {
    std::vector<std::int64_t> out;
    auto q = db.prepare("SELECT s.src_file, s.src_line FROM papers p JOIN staging.staging s ON s.id = p.id ORDER BY p.row");
    while (q.step()) out.push_back(q.column_int(0) < 0 ? q.column_int(1) : -1);
    return out;
}

struct Built {
    CorpusManifest manifest;
    Reading reading;
    std::size_t unmatched_abstracts = 0;
    std::size_t unmatched_citations = 0;
};

// corpus add by rebuild: the papers the base corpus left without a vector stay listed in its
// unembedded table, as an incremental add keeps them (a paper the new files leave unembedded
// again keeps the new files' record).
void carry_base_unembedded(SqliteDb& db, const std::string& base_dir) {
    SqliteStatement attach = db.prepare("ATTACH DATABASE ? AS base");
    attach.bind(1, (fs::path(base_dir) / "papers.sqlite").string());
    attach.step();
    if (has_table(db, "unembedded", "base"))
        db.exec("CREATE TABLE IF NOT EXISTS main.unembedded (id TEXT NOT NULL PRIMARY KEY, title TEXT NOT NULL, date TEXT);"
                "INSERT OR IGNORE INTO main.unembedded (id, title, date) SELECT id, title, date FROM base.unembedded;");
    db.exec("DETACH DATABASE base");
}

// The citation graph and the insertion times of the papers built; an add that rebuilds carries
// over the base corpus's S2 citations dataset edges and its papers' insertion times.
void build_beside_papers(SqliteDb& db, const ImportOptions& options, const std::string& base_dir) {
    const import_detail::AddedTables tables = import_detail::added_tables(options, base_dir);
    if (!base_dir.empty()) {
        SqliteStatement attach = db.prepare("ATTACH DATABASE ? AS cite_base");
        attach.bind(1, (fs::path(base_dir) / "papers.sqlite").string());
        attach.step();
    }
    const std::string base = base_dir.empty() ? "" : "cite_base";
    db.exec("BEGIN");
    citations_detail::build_citation_tables(db, tables.citation_format, "main", "main", base);
    import_detail::build_paper_inserted(db, tables.now, base, tables.base_created);
    db.exec("COMMIT");
    if (!base_dir.empty()) db.exec("DETACH DATABASE cite_base");
}

// Reads every source into papers.sqlite in `work` (with vectors for s2 embeddings, or what
// `finish` writes when there is a base).
void build_papers(const ImportOptions& options, const std::string& base_dir, const fs::path& work,
                  const std::function<void(import_detail::BuiltCorpus&)>& finish, Built& built) {
    const std::string db_path = (work / "papers.sqlite").string();
    const std::string staging_path = (work / "staging.sqlite").string();
    SqliteDb db(db_path, SqliteDb::Mode::read_write_create);
    std::optional<import_detail::S2Join> s2;
    import_detail::attach_staging(db, staging_path, options, s2, base_dir);
    built.reading = read_sources(options, db, s2 ? &*s2 : nullptr, base_dir);
    finish_reading(options, db, s2 ? &*s2 : nullptr, built.reading);
    if (!base_dir.empty()) carry_base_unembedded(db, base_dir);
    order_and_index(db, options);
    build_beside_papers(db, options, base_dir);
    if (s2) built.unmatched_citations = citations_detail::n_citing_outside(db) + s2->n_citations_without_cited();
    import_detail::fill_corpus_stats(db, built.manifest);
    if (s2) {
        built.manifest.n_unembedded = s2->n_unembedded();
        built.unmatched_abstracts = s2->n_unmatched_abstracts();
        built.manifest.unembedded = s2->unembedded_first();
    }
    if (finish) {
        import_detail::BuiltCorpus state{db, work.string(), built.manifest, old_rows_of_new(db), s2 ? &*s2 : nullptr};
        finish(state);
    } else if (s2 && s2->has_vectors()) {
        s2->write_vectors((work / "vectors.npy").string(), built.manifest);
    }
    db.exec("DETACH DATABASE staging");
    fs::remove(staging_path);
    db.exec("PRAGMA journal_mode = DELETE");
}

// corpus add without a rebuild: the base's papers.sqlite copied into `work` (a file copy,
// far cheaper than staging and indexing every paper again), the new records staged beside it
// and applied (papers_incremental.hpp); then `finish` writes vectors and caches.
void build_papers_incremental(const ImportOptions& options, const std::string& base_dir, const fs::path& work,
                              const std::function<void(import_detail::BuiltCorpus&)>& finish, Built& built) {
    const std::string db_path = (work / "papers.sqlite").string();
    const std::string staging_path = (work / "staging.sqlite").string();
    fs::copy_file(fs::path(base_dir) / "papers.sqlite", db_path);
    kill_point("add:papers-copied");
    SqliteDb db(db_path, SqliteDb::Mode::read_write_create);
    std::optional<import_detail::S2Join> s2;
    import_detail::attach_staging(db, staging_path, options, s2, base_dir);
    built.reading = read_sources(options, db, s2 ? &*s2 : nullptr, "", true);
    if (s2) import_detail::check_s2_side_records(db);
    finish_reading(options, db, s2 ? &*s2 : nullptr, built.reading);
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "indexing";
    if (options.on_progress) options.on_progress(progress);
    db.exec("BEGIN");
    std::vector<std::int64_t> old_row_of_new =
        import_detail::apply_staged_papers(db, import_detail::added_tables(options, base_dir));
    built.manifest.papers_generation = import_detail::new_generation();
    import_detail::write_generation(db, built.manifest.papers_generation);
    db.exec("COMMIT");
    import_detail::fill_corpus_stats(db, built.manifest);
    if (s2) {
        built.manifest.n_unembedded = s2->n_unembedded();
        built.unmatched_abstracts = s2->n_unmatched_abstracts();
        built.manifest.unembedded = s2->unembedded_first();
    }
    import_detail::BuiltCorpus state{db, work.string(), built.manifest, std::move(old_row_of_new), s2 ? &*s2 : nullptr};
    finish(state);
    db.exec("DETACH DATABASE staging");
    fs::remove(staging_path);
}

// Renames the finished work directory to `out`, replacing a corpus there. A kill between these
// steps is repaired by recover_interrupted_import() on the next open or import: the new corpus
// completed, or the old one restored.
void commit_work(WorkDir& work, const fs::path& out) {
    kill_point("import:built");
    if (fs::exists(out)) {
        const fs::path old = out.parent_path() / (out.filename().string() + ".replaced-" + std::to_string(::getpid()));
        fs::rename(out, old);
        kill_point("import:between-renames");
        fs::rename(work.path(), out);
        work.committed();
        kill_point("import:before-removing-old");
        // (recovery may be removing it too, now that no locked DIR.importing-PID is beside it)
        std::error_code ec;
        fs::remove_all(old, ec);
    } else {
        fs::rename(work.path(), out);
        work.committed();
    }
    fsync_path(out.parent_path().string());
}

}  // namespace

namespace import_detail {

void record_reading(CorpusManifest& manifest, const Reading& reading) {
    manifest.sources.insert(manifest.sources.end(), reading.sources.begin(), reading.sources.end());
    manifest.n_skipped += reading.skipped;
    manifest.n_duplicates += reading.duplicates;
    manifest.n_revised += reading.revised;
    manifest.n_deleted += reading.deleted;
    manifest.skipped.insert(manifest.skipped.end(), reading.skipped_first.begin(), reading.skipped_first.end());
}

ImportSummary import_onto(const ImportOptions& options, const std::string& base_dir,
                          const std::function<void(BuiltCorpus&)>& finish, bool incremental) {
    if (options.out_dir.empty()) throw UsageError("no output directory: give one", "out");
    const fs::path out = corpus_dir_path(options.out_dir);
    recover_interrupted_import(out);
    recover_interrupted_add_waiting(out);
    check_import_options(options, out);
    fs::create_directories(out.parent_path());
    WorkDir work(out);
    Built built;
    if (incremental) build_papers_incremental(options, base_dir, work.path(), finish, built);
    else build_papers(options, base_dir, work.path(), finish, built);
    kill_point("import:papers-written");
    ImportProgress finishing;
    finishing.stage = "finishing";
    finishing.records = built.reading.accepted;
    if (options.on_progress) options.on_progress(finishing);

    const std::string db_path = (work.path() / "papers.sqlite").string();
    fsync_path(db_path);
    CorpusManifest& manifest = built.manifest;
    const Reading& reading = built.reading;
    record_reading(manifest, reading);
    manifest.papers_sha256 = sha256_file(db_path);
    manifest.papers_fingerprint = file_fingerprint(db_path);
    manifest.created = utc_now_iso8601();
    manifest.input_order_recorded = true;
    write_manifest(work.path().string(), manifest);  // the manifest is what makes a corpus complete
    fsync_path(work.path().string());
    commit_work(work, out);

    ImportSummary summary;
    summary.n_papers = reading.accepted;
    summary.n_unembedded = manifest.n_unembedded;
    summary.n_unmatched_abstracts = built.unmatched_abstracts;
    summary.n_unmatched_citations = built.unmatched_citations;
    summary.n_revised = reading.revised;
    summary.n_deleted = reading.deleted;
    summary.n_skipped = reading.skipped;
    summary.n_duplicates = reading.duplicates;
    summary.out_dir = out.string();
    return summary;
}

}  // namespace import_detail

ImportSummary import_corpus(const ImportOptions& options) {
    // An import that may replace a corpus runs apart from the adds to corpora of its folder: an
    // add running across the replacement would rename its own result over the new corpus.
    std::optional<FolderWriterLock> one_writer_at_a_time;
    if (options.overwrite && !options.out_dir.empty())
        one_writer_at_a_time.emplace(corpus_dir_path(options.out_dir).parent_path());
    return import_detail::import_onto(options, "", {}, false);
}

}  // namespace novelty
