#include "corpus/add_in_place.hpp"

#include "corpus/corpus_lock.hpp"
#include "corpus/import/papers_incremental.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

namespace novelty::import_detail {

namespace fs = std::filesystem;

std::string read_generation(SqliteDb& db) {
    if (!has_table(db, "corpus_generation")) return "";
    auto token = db.prepare("SELECT token FROM main.corpus_generation");
    return token.step() ? token.column_text(0) : "";
}

void write_generation(SqliteDb& db, const std::string& token) {
    db.exec("CREATE TABLE IF NOT EXISTS main.corpus_generation (token TEXT NOT NULL); DELETE FROM main.corpus_generation;");
    auto insert = db.prepare("INSERT INTO main.corpus_generation (token) VALUES (?)");
    insert.bind(1, token);
    insert.step();
}

std::string new_generation() {
    std::random_device device;
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 32; ++i) out += digits[device() & 15u];
    return out;
}

namespace {

// The intent record: what step 4 moves into the corpus.
struct Intent {
    std::string generation;
    std::vector<std::string> caches;
    bool vectors = false;
};

void write_intent(const fs::path& work, const Intent& intent) {
    const nlohmann::json j{{"generation", intent.generation}, {"caches", intent.caches}, {"vectors", intent.vectors}};
    write_file_atomic((work / "add.json").string(), j.dump(2) + "\n");
}

Intent read_intent(const fs::path& work) {
    std::ifstream in(work / "add.json");
    std::stringstream text;
    text << in.rdbuf();
    Intent intent;
    try {
        const auto j = nlohmann::json::parse(text.str());
        intent.generation = j.at("generation").get<std::string>();
        intent.caches = j.at("caches").get<std::vector<std::string>>();
        intent.vectors = j.at("vectors").get<bool>();
    } catch (const std::exception& e) {
        throw CorpusError((work / "add.json").string() + ": invalid intent record of an interrupted corpus add: " + e.what());
    }
    return intent;
}

// The work directory; removed on the way out unless the papers transaction committed (then it
// is what recovery rolls forward from, should step 4 fail).
class AddingDir {
public:
    explicit AddingDir(const fs::path& dir) : path_(dir.parent_path() / (dir.filename().string() + ".adding-" +
                                                                            std::to_string(::getpid()))) {
        fs::remove_all(path_);
        fs::create_directories(path_);
        lock_.emplace(path_);
    }
    ~AddingDir() {
        std::error_code ec;
        if (!committed_) fs::remove_all(path_, ec);
    }  // (the lock goes after the folder: recovery never takes a live add's folder)
    const fs::path& path() const { return path_; }
    void committed() { committed_ = true; }

private:
    fs::path path_;
    std::optional<WorkFolderLock> lock_;  ///< held while this process works in the folder
    bool committed_ = false;
};

std::vector<std::string> cache_files(const fs::path& cache) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file()) out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// Steps 1-3 on an open papers.sqlite (staging attached, transaction open).
void build_and_commit(const ImportOptions& options, SqliteDb& db, std::optional<S2Join>& s2, const AddingDir& work,
                      const fs::path& dir, const std::function<void(BuiltCorpus&)>& finish) {
    Reading reading = read_sources(options, db, s2 ? &*s2 : nullptr, "", true);  // (the staging file alone)
    // From here on every change to papers.sqlite (the s2 join's unembedded papers too) is part
    // of the one transaction.
    db.exec("BEGIN IMMEDIATE");
    if (s2) check_s2_side_records(db);
    finish_reading(options, db, s2 ? &*s2 : nullptr, reading);
    ImportProgress progress;
    progress.n_files = options.sources.size();
    progress.stage = "indexing";
    if (options.on_progress) options.on_progress(progress);
    CorpusManifest manifest;
    std::vector<std::int64_t> old_row_of_new = apply_staged_papers(db, added_tables(options, dir.string()));
    manifest.papers_generation = new_generation();
    write_generation(db, manifest.papers_generation);
    fill_corpus_stats(db, manifest);
    if (s2) {
        manifest.n_unembedded = s2->n_unembedded();
        manifest.unembedded = s2->unembedded_first();
    }
    kill_point("add:papers-applied");
    BuiltCorpus state{db, work.path().string(), manifest, std::move(old_row_of_new), s2 ? &*s2 : nullptr};
    finish(state);
    record_reading(manifest, reading);
    manifest.created = utc_now_iso8601();
    manifest.input_order_recorded = true;
    write_manifest(work.path().string(), manifest);  // pending: papers checksums come in step 4
    write_intent(work.path(), {manifest.papers_generation, cache_files(work.path() / "cache"), manifest.dim > 0});
    fsync_path(work.path().string());
    kill_point("add:intent-written");
    db.exec("COMMIT");
}

}  // namespace

void add_in_place(const ImportOptions& options, const fs::path& dir, const std::function<void(BuiltCorpus&)>& finish) {
    check_import_options(options, dir);
    AddingDir work(dir);
    const std::string staging_path = (work.path() / "staging.sqlite").string();
    {
        // (the corpus was opened and checked before; creation is for the staging file attached)
        SqliteDb db((dir / "papers.sqlite").string(), SqliteDb::Mode::read_write_create);
        std::optional<S2Join> s2;
        attach_staging(db, staging_path, options, s2, dir.string());
        // The staging pragmas name every schema; the corpus's own file keeps a rollback journal,
        // synced, so that a kill undoes an uncommitted transaction and a commit survives power loss.
        db.exec("PRAGMA main.journal_mode = DELETE; PRAGMA main.synchronous = FULL;");
        build_and_commit(options, db, s2, work, dir, finish);
        work.committed();
        kill_point("add:papers-committed");
        db.exec("DETACH DATABASE staging");
    }
    fs::remove(staging_path);
    finish_in_place(work.path(), dir);
}

void finish_in_place(const fs::path& work, const fs::path& dir) {
    const Intent intent = read_intent(work);
    if (intent.vectors && fs::exists(work / "vectors.npy")) {
        fs::rename(work / "vectors.npy", dir / "vectors.npy");
        kill_point("add:vectors-moved");
    }
    fs::create_directories(dir / "cache");
    for (const auto& name : intent.caches) {
        if (!fs::exists(work / "cache" / name)) continue;
        fs::rename(work / "cache" / name, dir / "cache" / name);
        kill_point("add:cache-moved");
    }
    const std::set<std::string> kept(intent.caches.begin(), intent.caches.end());
    for (const auto& name : cache_files(dir / "cache"))
        if (!kept.count(name)) fs::remove(dir / "cache" / name);  // caches of the old rows
    fsync_path((dir / "cache").string());
    CorpusManifest manifest = read_manifest(work.string());
    const std::string db_path = (dir / "papers.sqlite").string();
    manifest.papers_sha256 = sha256_file(db_path);
    manifest.papers_fingerprint = file_fingerprint(db_path);
    write_manifest(dir.string(), manifest);  // the new corpus is complete from here
    kill_point("add:manifest-written");
    fs::remove_all(work);
    fsync_path(dir.parent_path().string());
}

AddRecovery recover_add(const fs::path& work, const fs::path& dir) {
    std::string committed;
    if (fs::exists(dir / "papers.sqlite")) {
        // Opening for writing lets SQLite roll back a transaction the kill left uncommitted.
        SqliteDb db((dir / "papers.sqlite").string(), SqliteDb::Mode::read_write);
        committed = read_generation(db);
    }
    std::error_code ec;
    const bool complete = !committed.empty() && fs::exists(dir / "manifest.json", ec) &&
                          read_manifest(dir.string()).papers_generation == committed;
    // The transaction of this add committed (then its pending manifest is there: it is written
    // before the intent and removed only after the corpus's own).
    const bool ours = fs::exists(work / "add.json") && !committed.empty() && read_intent(work).generation == committed;
    if (ours && !complete) {
        finish_in_place(work, dir);
        return AddRecovery::forward;
    }
    fs::remove_all(work);
    return ours ? AddRecovery::finished : AddRecovery::back;
}

}  // namespace novelty::import_detail
