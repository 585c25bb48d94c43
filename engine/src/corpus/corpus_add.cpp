// novelty corpus add: the import pipeline with the corpus's own papers staged first, then the
// vectors of the new rows, then each density cache updated (update_self_join), all in the work
// directory that replaces the corpus at the end.
#include "novelty/corpus/corpus_add.hpp"

#include "corpus/add_in_place.hpp"
#include "corpus/corpus_lock.hpp"
#include "corpus/corpus_recovery.hpp"
#include "corpus/import/import_build.hpp"
#include "corpus/import/papers_incremental.hpp"
#include "corpus/import/papers_layout.hpp"
#include "corpus/import/s2_join.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/vectors.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "scoring/self_join_update.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "util/notices.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <optional>
#include <regex>

namespace novelty {

namespace fs = std::filesystem;

namespace {

// A cache of the old corpus, read while the papers are applied (the read does not depend on them).
struct OldCache {
    std::string file;              ///< its name in DIR/cache
    std::size_t q = 0, k = 0;
    std::optional<SelfJoin> join;  ///< empty: not carried over (damaged, another size, not the CPU's)
};

struct AddState {
    const AddPapersOptions& options;
    const Corpus& base;
    AddPapersSummary& summary;
    std::future<std::vector<OldCache>> old_caches;
    std::string embedded_precision = {};  ///< the embedder's precision when new rows were embedded, else ""
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// Every file in the old corpus's cache folder, each self-join of the whole corpus that the CPU
// computed read (a damaged cache is dropped like any other that cannot be carried over).
std::vector<OldCache> read_old_caches(const Corpus& base) {
    std::vector<OldCache> out;
    const fs::path cache_dir = fs::path(base.dir()) / "cache";
    std::error_code ec;
    if (!fs::is_directory(cache_dir, ec)) return out;
    const std::regex name(R"(selfjoin-q(\d+)-k(\d+)-rows(\d+)\.bin)");
    for (const auto& entry : fs::directory_iterator(cache_dir)) {
        OldCache cache;
        cache.file = entry.path().filename().string();
        std::smatch m;
        SelfJoin old;
        try {
            if (std::regex_match(cache.file, m, name) && std::stoull(m[3]) == base.size() &&
                read_self_join(entry.path().string(), base.manifest().vectors_sha256, base.size(), std::stoull(m[1]),
                               std::stoull(m[2]), old) &&
                old.computed_by == "cpu") {
                cache.q = std::stoull(m[1]);
                cache.k = std::stoull(m[2]);
                cache.join = std::move(old);
            }
        } catch (const CorpusError&) {
            cache.join.reset();
        }
        out.push_back(std::move(cache));
    }
    return out;
}

// The vectors of the new rows (n_new x dim, normalised), from the s2 embeddings or the embedder.
std::vector<float> new_row_vectors(AddState& st, import_detail::BuiltCorpus& built, const std::vector<std::size_t>& new_rows) {
    const std::size_t dim = st.base.manifest().dim;
    std::vector<float> out(new_rows.size() * dim);
    std::vector<std::size_t> to_embed;
    std::vector<float> given;
    auto id_of = built.db.prepare("SELECT id, title, abstract FROM papers WHERE row = ?");
    for (std::size_t i = 0; i < new_rows.size(); ++i) {
        id_of.bind(1, static_cast<std::int64_t>(new_rows[i]));
        id_of.step();
        const std::string id = id_of.column_text(0);
        id_of.reset();
        std::optional<std::size_t> old_row;
        if (built.s2 && built.s2->vector_of(id, given)) {
            if (given.size() != dim || built.s2->model() != st.base.manifest().embedder->name)
                throw UsageError("the vectors given for the new papers (" + built.s2->model() + ", dim " +
                                 std::to_string(given.size()) + ") are not the corpus's (" +
                                 st.base.manifest().embedder->name + ", dim " + std::to_string(dim) + ")", "in");
            std::copy(given.begin(), given.end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        } else if (built.s2 && (old_row = built.s2->revised_base_row(id))) {
            // An s2 revision without a vector (a papers update): the paper keeps its vector.
            st.base.vectors().row_as_f32(*old_row, out.data() + i * dim);
            ++st.summary.n_vectors_kept;
        } else {
            to_embed.push_back(i);
        }
    }
    if (!to_embed.empty()) {
        if (!st.options.make_embedder)
            throw UsageError(std::to_string(to_embed.size()) + " new papers have no vector, and no embedder was given to "
                             "embed them (give the corpus's embedder, or embeddings files for them)", "embedder");
        std::unique_ptr<Embedder> embedder = st.options.make_embedder();
        if (embedder->name() != st.base.manifest().embedder->name || embedder->dim() != dim)
            throw UsageError("the embedder '" + embedder->name() + "' is not the corpus's ('" +
                             st.base.manifest().embedder->name + "')", "embedder");
        st.embedded_precision = embedder->precision();
        for (std::size_t start = 0; start < to_embed.size(); start += st.options.embed_batch) {
            const std::size_t n = std::min(st.options.embed_batch, to_embed.size() - start);
            std::vector<std::string> texts;
            for (std::size_t i = 0; i < n; ++i) {
                id_of.bind(1, static_cast<std::int64_t>(new_rows[to_embed[start + i]]));
                id_of.step();
                texts.push_back(embedding_text(id_of.column_text(1), id_of.column_text(2)));
                id_of.reset();
            }
            const std::vector<float> vectors = embedder->embed(texts);
            for (std::size_t i = 0; i < n; ++i)
                std::copy(vectors.begin() + static_cast<std::ptrdiff_t>(i * dim),
                          vectors.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim),
                          out.begin() + static_cast<std::ptrdiff_t>(to_embed[start + i] * dim));
        }
        st.summary.n_embedded = to_embed.size();
    }
    std::vector<RowProblem> problems;
    if (normalize_rows(out.data(), new_rows.size(), dim, problems) > 0)
        for (std::size_t i = 0; i < new_rows.size(); ++i)
            if (problems[i] != RowProblem::none)
                throw InputError(built.dir, 0, "the vector of new row " + std::to_string(new_rows[i]) + " " +
                                                   row_problem_text(problems[i]));
    return out;
}

// The precision the manifest records after an add: the corpus's when nothing was embedded, when the
// new rows were embedded at the same precision, or when the corpus's is unrecorded (its old rows'
// precision stays unknown); "mixed" when rows of two known precisions now share the file.
std::string merged_precision(const std::string& old_precision, const std::string& embedded) {
    if (embedded.empty() || embedded == old_precision || old_precision.empty()) return old_precision;
    return "mixed";
}

// Writes DIR/vectors.npy of the new corpus: kept rows' vectors copied, new rows' given.
void write_vectors(AddState& st, import_detail::BuiltCorpus& built) {
    const CorpusManifest& old = st.base.manifest();
    std::vector<std::size_t> new_rows;
    for (std::size_t r = 0; r < built.old_row_of_new.size(); ++r)
        if (built.old_row_of_new[r] < 0) new_rows.push_back(r);
    const std::vector<float> fresh = new_row_vectors(st, built, new_rows);
    const std::string path = (fs::path(built.dir) / "vectors.npy").string();
    const NpyMatrix& vectors = st.base.vectors();
    NpyWriter writer(path, vectors.dtype(), old.dim);
    std::vector<float> row(old.dim);
    std::size_t next_new = 0;
    const std::vector<std::int64_t>& map = built.old_row_of_new;
    for (std::size_t r = 0; r < map.size();) {
        if (map[r] < 0) {
            writer.append_f32(fresh.data() + next_new++ * old.dim, 1);
            ++r;
        } else if (vectors.dtype() == DType::f32) {  // a run of consecutive old rows, straight from the map
            std::size_t n = 1;
            while (r + n < map.size() && map[r + n] == map[r] + static_cast<std::int64_t>(n)) ++n;
            writer.append_f32(static_cast<const float*>(vectors.data()) + static_cast<std::size_t>(map[r]) * old.dim, n);
            r += n;
        } else {
            vectors.row_as_f32(static_cast<std::size_t>(map[r]), row.data());  // f16 -> f32 -> f16 is exact
            writer.append_f32(row.data(), 1);
            ++r;
        }
    }
    writer.finish();
    built.manifest.dim = old.dim;
    built.manifest.dtype = old.dtype;
    built.manifest.embedder = old.embedder;
    built.manifest.embedder->precision = merged_precision(old.embedder->precision, st.embedded_precision);
    built.manifest.vectors_sha256 = sha256_file(path);
    built.manifest.vectors_fingerprint = file_fingerprint(path);
}

// Each cache of the whole old corpus computed on the CPU is updated into the new directory.
void update_caches(AddState& st, import_detail::BuiltCorpus& built) {
    if (!st.old_caches.valid()) return;
    std::vector<OldCache> caches = st.old_caches.get();
    if (caches.empty()) return;
    const NpyMatrix vectors = NpyMatrix::open((fs::path(built.dir) / "vectors.npy").string());
    // The density store's lists: kept where the new papers cannot change them, updated where they can.
    const auto store_started = std::chrono::steady_clock::now();
    const DensityStoreUpdate store = update_density_store(
        (fs::path(st.base.dir()) / "cache").string(), st.base.manifest().vectors_sha256, st.base.size(),
        (fs::path(built.dir) / "cache").string(), built.manifest.vectors_sha256, built.old_row_of_new,
        VectorView::of(vectors));
    st.summary.cache_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - store_started).count();
    st.summary.density_lists_kept = store.kept;
    st.summary.density_lists_dropped = store.dropped;
    for (OldCache& cache : caches) {
        if (cache.file.rfind("densities-k", 0) == 0) continue;  // carried over above, under new names
        if (!cache.join) {
            st.summary.caches_dropped.push_back(cache.file);
            continue;
        }
        SelfJoinUpdateStats stats;
        const auto started = std::chrono::steady_clock::now();
        const SelfJoin join = update_self_join(std::move(*cache.join), built.old_row_of_new, VectorView::of(vectors), 0, &stats);
        cache.join.reset();
        const std::string out = "selfjoin-q" + std::to_string(cache.q) + "-k" + std::to_string(cache.k) + "-rows" +
                                std::to_string(join.n_rows) + ".bin";
        write_self_join((fs::path(built.dir) / "cache" / out).string(), built.manifest.vectors_sha256, join);
        st.summary.cache_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        st.summary.caches_updated.push_back(out);
        st.summary.rows_searched += stats.new_rows + stats.dirty_rows;
        st.summary.rows_entered += stats.entered_rows;
    }
}

// True when the corpus's papers.sqlite has the keyed layout that an add can update in place.
bool keyed_layout(const std::string& dir) {
    SqliteDb db((fs::path(dir) / "papers.sqlite").string(), SqliteDb::Mode::read_only);
    return import_detail::has_keyed_layout(db);
}

// The papers listed as left unembedded that are rows now (a later add gave their vectors) leave
// papers.sqlite's unembedded table, and the manifest's count and first ids are the table's.
void recount_unembedded(SqliteDb& db, CorpusManifest& m) {
    if (!has_table(db, "unembedded")) return;
    db.exec("DELETE FROM main.unembedded WHERE EXISTS (SELECT 1 FROM main.papers p WHERE p.id = unembedded.id)");
    auto count = db.prepare("SELECT count(*) FROM main.unembedded");
    count.step();
    m.n_unembedded = static_cast<std::size_t>(count.column_int(0));
    m.unembedded.clear();
    auto first = db.prepare("SELECT id FROM main.unembedded ORDER BY id LIMIT ?");
    first.bind(1, static_cast<std::int64_t>(import_detail::max_listed_unembedded));
    while (first.step()) m.unembedded.push_back(first.column_text(0));
}

void finish_add(AddState& st, import_detail::BuiltCorpus& built) {
    st.summary.papers_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
    const CorpusManifest& old = st.base.manifest();
    CorpusManifest& m = built.manifest;
    m.sources = old.sources;
    m.n_skipped = old.n_skipped;
    m.n_duplicates = old.n_duplicates;
    m.n_revised = old.n_revised;
    m.n_deleted = old.n_deleted;
    m.skipped = old.skipped;
    m.n_unembedded += old.n_unembedded;
    m.unembedded.insert(m.unembedded.begin(), old.unembedded.begin(), old.unembedded.end());
    recount_unembedded(built.db, m);
    m.updates = old.updates;
    AddPapersSummary& s = st.summary;
    s.n_papers = built.old_row_of_new.size();
    std::size_t kept = 0;
    for (std::size_t r = 0; r < built.old_row_of_new.size(); ++r) {
        const std::int64_t o = built.old_row_of_new[r];
        if (o < 0) ++s.n_added;
        else ++kept;
        if (!s.first_renumbered_row && o != static_cast<std::int64_t>(r)) s.first_renumbered_row = r;
    }
    if (s.first_renumbered_row && *s.first_renumbered_row + s.n_added == s.n_papers && kept == old.count) {
        bool appended = true;  // only appended: no old row moved
        for (std::size_t r = *s.first_renumbered_row; r < s.n_papers; ++r) appended = appended && built.old_row_of_new[r] < 0;
        if (appended) s.first_renumbered_row.reset();
    }
    s.n_removed = old.count - kept;
    if (old.dim > 0) {
        write_vectors(st, built);
        kill_point("add:vectors-written");
        update_caches(st, built);
        kill_point("add:caches-written");
    }
    if (built.s2) s.n_vectors_replaced = built.s2->n_vectors_replaced();
    // Nothing changed: no update to record (a rebuild may have filled abstracts of kept rows).
    if (s.n_added == 0 && s.n_removed == 0 && !s.rebuilt) return;
    m.updates.push_back({utc_now_iso8601(), s.n_added, s.n_removed,
                         s.first_renumbered_row ? static_cast<std::int64_t>(*s.first_renumbered_row) : -1,
                         s.caches_updated.size()});
}

}  // namespace

AddPapersSummary add_papers(const std::string& dir, const AddPapersOptions& options) {
    // In place under the exclusive lock; through a copy when the corpus is open elsewhere
    // (corpus_lock.hpp), so that readers already running keep the corpus they opened.
    const fs::path path = corpus_dir_path(dir);
    const FolderWriterLock one_writer_at_a_time(path.parent_path());
    recover_interrupted_import(path);
    std::optional<CorpusLock> lock;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        lock.emplace(path);
        if (lock->try_exclusive()) {  // (no other add holds it: they wait on the folder's writer lock)
            recover_interrupted_add(path);
        } else {
            notice(path.string() + " is open in another process: adding through a copy of papers.sqlite, so that "
                                   "its readers keep the corpus they opened");
            lock.reset();
        }
    }
    const Corpus base = Corpus::open(dir);
    if (base.manifest().dim > 0 && !base.manifest().embedder)
        throw CorpusError(dir + ": the corpus has vectors but records no embedder");
    ImportOptions import;
    import.sources = options.sources;
    import.out_dir = dir;
    import.overwrite = true;
    import.skip_invalid = options.skip_invalid;
    import.on_progress = options.on_progress;
    import.on_skip = options.on_skip;
    import.on_duplicate = options.on_duplicate;
    AddPapersSummary summary;
    AddState st{options, base, summary, std::async(std::launch::async, read_old_caches, std::cref(base))};
    const auto finish = [&](import_detail::BuiltCorpus& built) { finish_add(st, built); };
    if (keyed_layout(base.dir())) {
        try {
            if (lock) import_detail::add_in_place(import, path, finish);
            else import_detail::import_onto(import, base.dir(), finish, true);
            return summary;
        } catch (const import_detail::NeedsRebuild&) {
            summary = AddPapersSummary{};  // rebuilt below, as for corpora of the older layout
            st.started = std::chrono::steady_clock::now();
        }
    }
    summary.rebuilt = true;
    import_detail::import_onto(import, base.dir(), finish, false);
    return summary;
}

}  // namespace novelty
