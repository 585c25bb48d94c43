// Opening a corpus directory read-only and looking papers up.
#include "corpus/corpus_access.hpp"
#include "corpus/corpus_recovery.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "corpus/sqlite_db.hpp"
#include "corpus/add_in_place.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <optional>

namespace novelty {

struct Corpus::Impl {
    std::string dir;
    CorpusManifest manifest;
    std::unique_ptr<SqliteDb> db;
    std::optional<NpyMatrix> vectors;
    // Prepared once, reused: lookups run once per neighbour in large outputs.
    std::optional<SqliteStatement> paper_by_row;
    std::optional<SqliteStatement> brief_by_row;
    std::optional<SqliteStatement> row_by_id;
    std::optional<SqliteStatement> row_by_alias;
    std::optional<bool> has_aliases;  ///< papers.sqlite has an aliases table (older corpora do not)
    std::unique_ptr<CorpusLock> lock;  ///< held shared while open (corpus_lock.hpp)
    Impl();
    ~Impl();
};

namespace {

// The connection of each open corpus by the address of its manifest (corpus_access.hpp).
std::mutex open_dbs_mutex;
std::unordered_map<const CorpusManifest*, SqliteDb*>& open_dbs() {
    static auto* dbs = new std::unordered_map<const CorpusManifest*, SqliteDb*>;  // never destroyed
    return *dbs;
}

}  // namespace

Corpus::Impl::Impl() = default;

Corpus::Impl::~Impl() {
    std::lock_guard guard(open_dbs_mutex);
    open_dbs().erase(&manifest);
}

SqliteDb& corpus_detail::papers_db(const Corpus& corpus) {
    std::lock_guard guard(open_dbs_mutex);
    const auto found = open_dbs().find(&corpus.manifest());
    if (found == open_dbs().end()) throw Error(corpus.dir() + ": the corpus is not open");
    return *found->second;
}

Corpus::Corpus(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Corpus::Corpus(Corpus&&) noexcept = default;
Corpus& Corpus::operator=(Corpus&&) noexcept = default;
Corpus::~Corpus() = default;

namespace {

// The cheap check of a file against the manifest's fingerprint (none in older corpora).
void check_fingerprint(const std::string& dir, const std::string& path, const char* name, const FileFingerprint& expected,
                       const std::string& remedy) {
    if (expected.sample_sha256.empty()) return;
    const FileFingerprint found = file_fingerprint(path);
    if (found.bytes != expected.bytes)
        throw CorpusError(dir + ": " + name + " is " + std::to_string(found.bytes) + " bytes but manifest.json says " +
                          std::to_string(expected.bytes) + "; the corpus is inconsistent (" + remedy + ")");
    if (found.sample_sha256 != expected.sample_sha256)
        throw CorpusError(dir + ": " + name + " is not the file manifest.json describes (its sampled checksum differs); " +
                          "the corpus is inconsistent (" + remedy + ")");
}

// papers.sqlite and the manifest of one and the same `corpus add` (add_in_place.hpp).
void check_generation(const std::string& dir, SqliteDb& db, const std::string& expected) {
    const std::string found = import_detail::read_generation(db);
    if (found != expected)
        throw CorpusError(dir + ": papers.sqlite is of another generation (" + (found.empty() ? "none" : found) +
                          ") than manifest.json says (" + (expected.empty() ? "none" : expected) +
                          "); a 'corpus add' was interrupted: open the corpus with write access to the folder beside it "
                          "so that the add is completed or rolled back, or import the corpus again");
}

thread_local int reopen_depth = 0;  ///< Corpus::open's retries in this thread (see its end)

}  // namespace

Corpus Corpus::open(const std::string& dir, Part part) {
    auto impl = std::make_unique<Impl>();
    impl->dir = dir;
    const std::filesystem::path path = corpus_dir_path(dir);
    recover_interrupted_import(path);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) impl->lock = lock_for_reading(path);
    impl->manifest = read_manifest(dir);
    const auto& m = impl->manifest;
    const std::filesystem::path root(dir);
    const std::string db_path = (root / "papers.sqlite").string();
    if (!std::filesystem::exists(db_path)) throw CorpusError(dir + ": papers.sqlite is missing");
    check_fingerprint(dir, db_path, "papers.sqlite", m.papers_fingerprint, "import it again");
    // While the shared lock is held no process changes this papers.sqlite (an add goes through a
    // copy): read it as a snapshot. The add's own reads (it holds the exclusive lock and writes
    // the file) see its changes.
    const bool own_add = impl->lock && impl->lock->exclusive_here();
    impl->db = std::make_unique<SqliteDb>(db_path, own_add ? SqliteDb::Mode::read_only : SqliteDb::Mode::snapshot);
    check_generation(dir, *impl->db, m.papers_generation);
    {
        std::lock_guard guard(open_dbs_mutex);
        open_dbs()[&impl->manifest] = impl->db.get();
    }
    {
        // (keyed layout: the narrow row table, not the papers view, whose join costs a lookup a row)
        auto count = impl->db->prepare(has_table(*impl->db, "paper_rows") ? "SELECT count(*) FROM paper_rows"
                                                                          : "SELECT count(*) FROM papers");
        count.step();
        const auto rows = static_cast<std::size_t>(count.column_int(0));
        if (rows != m.count)
            throw CorpusError(dir + ": papers.sqlite has " + std::to_string(rows) + " rows but the manifest says " +
                              std::to_string(m.count));
    }
    const std::string vectors_path = (root / "vectors.npy").string();
    if (m.dim > 0 && part == Part::all) {
        if (!std::filesystem::exists(vectors_path))
            throw CorpusError(dir + ": the manifest lists vectors but vectors.npy is missing");
        check_fingerprint(dir, vectors_path, "vectors.npy", m.vectors_fingerprint,
                          "an add-vectors or embed may have been interrupted: run it again; "
                          "'novelty corpus info " + dir + " --verify' checks every byte");
        try {
            impl->vectors.emplace(NpyMatrix::open(vectors_path));
        } catch (const InputError& e) {
            throw CorpusError(dir + ": vectors.npy is damaged: " + e.problem() + "; run 'novelty corpus add-vectors' again");
        }
        const NpyMatrix& v = *impl->vectors;
        if (v.rows() != m.count || v.cols() != m.dim || element_name(v.dtype()) != m.dtype)
            throw CorpusError(dir + ": vectors.npy is " + std::to_string(v.rows()) + " x " + std::to_string(v.cols()) +
                              " " + element_name(v.dtype()) + " but the manifest says " + std::to_string(m.count) +
                              " x " + std::to_string(m.dim) + " " + m.dtype + "; run 'novelty corpus add-vectors' again");
    }
    // The files were opened by path after the directory was locked: when an add through a copy
    // renamed a new corpus into place in between, they may be the new directory's under the old
    // one's lock (and the new one may be updated in place under them). Open again then.
    if (impl->lock && !impl->lock->names(path) && reopen_depth < 4) {
        ++reopen_depth;
        const struct Done { ~Done() { --reopen_depth; } } done;
        return open(dir, part);
    }
    return Corpus(std::move(impl));
}

const std::string& Corpus::dir() const { return impl_->dir; }
const CorpusManifest& Corpus::manifest() const { return impl_->manifest; }
std::size_t Corpus::size() const { return impl_->manifest.count; }
bool Corpus::has_vectors() const { return impl_->vectors.has_value(); }

const NpyMatrix& Corpus::vectors() const {
    if (!impl_->vectors)
        throw CorpusError(impl_->dir + ": the corpus has no vectors yet (run 'novelty corpus add-vectors' or 'novelty corpus embed')");
    return *impl_->vectors;
}

Paper Corpus::paper(std::size_t row) const {
    if (row >= size()) throw UsageError("row " + std::to_string(row) + " is outside the corpus (" + std::to_string(size()) + " rows)");
    if (!impl_->paper_by_row)
        impl_->paper_by_row.emplace(impl_->db->prepare(
            "SELECT row, id, title, abstract, date, sort_date, year, field, venue, citations, extra FROM papers WHERE row = ?"));
    SqliteStatement& q = *impl_->paper_by_row;
    q.reset();
    q.bind(1, static_cast<std::int64_t>(row));
    if (!q.step()) throw CorpusError(impl_->dir + ": row " + std::to_string(row) + " is missing from papers.sqlite");
    Paper p;
    p.row = static_cast<std::size_t>(q.column_int(0));
    p.id = q.column_text(1);
    p.title = q.column_text(2);
    p.abstract = q.column_text(3);
    p.date = q.column_text(4);
    p.sort_date = q.column_text(5);
    if (!q.column_is_null(6)) p.year = static_cast<int>(q.column_int(6));
    p.field = q.column_text(7);
    p.venue = q.column_text(8);
    if (!q.column_is_null(9)) p.citations = q.column_int(9);
    p.extra_json = q.column_text(10);
    return p;
}

std::pair<std::string, std::string> Corpus::id_and_title(std::size_t row) const {
    if (row >= size()) throw UsageError("row " + std::to_string(row) + " is outside the corpus (" + std::to_string(size()) + " rows)");
    if (!impl_->brief_by_row) impl_->brief_by_row.emplace(impl_->db->prepare("SELECT id, title FROM papers WHERE row = ?"));
    SqliteStatement& q = *impl_->brief_by_row;
    q.reset();
    q.bind(1, static_cast<std::int64_t>(row));
    if (!q.step()) throw CorpusError(impl_->dir + ": row " + std::to_string(row) + " is missing from papers.sqlite");
    return {q.column_text(0), q.column_text(1)};
}

PaperLabels Corpus::labels(const std::vector<std::int64_t>& rows, bool with_titles) const {
    PaperLabels out;
    if (rows.size() >= PaperLabels::no_row)
        throw UsageError("labels of " + std::to_string(rows.size()) + " rows at once; at most " +
                         std::to_string(PaperLabels::no_row - 1) + " are supported");
    // Sorting (row, position) pairs gives the distinct rows in order and each position's label
    // index in one pass.
    std::vector<std::pair<std::int64_t, std::uint32_t>> by_row;
    by_row.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i] >= 0) by_row.emplace_back(rows[i], static_cast<std::uint32_t>(i));
    std::sort(by_row.begin(), by_row.end());
    out.index_of_input.assign(rows.size(), PaperLabels::no_row);
    for (const auto& [row, position] : by_row) {
        if (out.rows.empty() || out.rows.back() != row) out.rows.push_back(row);
        out.index_of_input[position] = static_cast<std::uint32_t>(out.rows.size() - 1);
    }
    if (out.rows.empty()) return out;
    if (static_cast<std::size_t>(out.rows.back()) >= size())
        throw UsageError("row " + std::to_string(out.rows.back()) + " is outside the corpus (" + std::to_string(size()) +
                         " rows)");
    out.ids.resize(out.rows.size());
    if (with_titles) out.titles.resize(out.rows.size());
    // A cursor from the first wanted row on, in row order; it steps over unwanted rows while
    // they are few, and seeks again past a larger gap.
    constexpr std::int64_t max_step_gap = 32;
    auto cursor = impl_->db->prepare(with_titles ? "SELECT row, id, title FROM papers WHERE row >= ? ORDER BY row"
                                                 : "SELECT row, id FROM papers WHERE row >= ? ORDER BY row");
    std::int64_t at = -1;  // the cursor's current row; -1 before the first seek
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
        const std::int64_t want = out.rows[i];
        if (at < 0 || want - at > max_step_gap) {
            cursor.reset();
            cursor.bind(1, want);
            at = cursor.step() ? cursor.column_int(0) : std::numeric_limits<std::int64_t>::max();
        }
        while (at < want && cursor.step()) at = cursor.column_int(0);
        if (at != want) throw CorpusError(impl_->dir + ": row " + std::to_string(want) + " is missing from papers.sqlite");
        out.ids[i] = cursor.column_text(1);
        if (with_titles) out.titles[i] = cursor.column_text(2);
    }
    return out;
}

std::optional<std::size_t> Corpus::find_row(const std::string& id) const {
    if (!impl_->row_by_id) impl_->row_by_id.emplace(impl_->db->prepare("SELECT row FROM papers WHERE id = ?"));
    SqliteStatement& q = *impl_->row_by_id;
    q.reset();
    q.bind(1, id);
    if (q.step()) return static_cast<std::size_t>(q.column_int(0));
    if (!impl_->has_aliases) {
        auto t = impl_->db->prepare("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = 'aliases'");
        t.step();
        impl_->has_aliases = t.column_int(0) > 0;
    }
    if (!*impl_->has_aliases) return std::nullopt;
    if (!impl_->row_by_alias) impl_->row_by_alias.emplace(impl_->db->prepare("SELECT row FROM aliases WHERE alias = ?"));
    SqliteStatement& a = *impl_->row_by_alias;
    a.reset();
    a.bind(1, normalize_alias(id));
    if (!a.step()) return std::nullopt;
    return static_cast<std::size_t>(a.column_int(0));
}

std::size_t Corpus::rows_through(const PartialDate& cutoff) const {
    auto q = impl_->db->prepare("SELECT count(*) FROM papers WHERE sort_date IS NOT NULL AND sort_date <= ?");
    q.bind(1, cutoff.effective());
    q.step();
    return static_cast<std::size_t>(q.column_int(0));
}

void Corpus::scan_metadata(const std::function<void(std::size_t row, const std::string& field, const std::string& venue,
                                                   const std::optional<std::int64_t>& citations)>& visit) const {
    auto cursor = impl_->db->prepare("SELECT row, field, venue, citations FROM papers ORDER BY row");
    while (cursor.step()) {
        const std::optional<std::int64_t> citations =
            cursor.column_is_null(3) ? std::nullopt : std::optional<std::int64_t>(cursor.column_int(3));
        visit(static_cast<std::size_t>(cursor.column_int(0)), cursor.column_is_null(1) ? "" : cursor.column_text(1),
              cursor.column_is_null(2) ? "" : cursor.column_text(2), citations);
    }
}

std::string Corpus::identity() const {
    return sha256_hex(impl_->manifest.papers_sha256 + ":" + impl_->manifest.vectors_sha256);
}

}  // namespace novelty
