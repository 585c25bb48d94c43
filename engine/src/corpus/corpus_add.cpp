// novelty corpus add: the import pipeline with the corpus's own papers staged first, then the
// vectors of the new rows, then each density cache updated (update_self_join), all in the work
// directory that replaces the corpus at the end.
#include "novelty/corpus/corpus_add.hpp"

#include "corpus/import/import_build.hpp"
#include "corpus/import/papers_incremental.hpp"
#include "corpus/import/papers_layout.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/vectors.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/self_join_update.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

namespace novelty {

namespace fs = std::filesystem;

namespace {

struct AddState {
    const AddPapersOptions& options;
    const Corpus& base;
    AddPapersSummary& summary;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

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
        if (built.s2 && built.s2->vector_of(id, given)) {
            if (given.size() != dim || built.s2->model() != st.base.manifest().embedder->name)
                throw UsageError("the vectors given for the new papers (" + built.s2->model() + ", dim " +
                                 std::to_string(given.size()) + ") are not the corpus's (" +
                                 st.base.manifest().embedder->name + ", dim " + std::to_string(dim) + ")", "in");
            std::copy(given.begin(), given.end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
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
    for (const std::int64_t o : built.old_row_of_new) {
        if (o >= 0) {
            vectors.row_as_f32(static_cast<std::size_t>(o), row.data());  // f16 -> f32 -> f16 is exact
            writer.append_f32(row.data(), 1);
        } else {
            writer.append_f32(fresh.data() + next_new++ * old.dim, 1);
        }
    }
    writer.finish();
    built.manifest.dim = old.dim;
    built.manifest.dtype = old.dtype;
    built.manifest.embedder = old.embedder;
    built.manifest.vectors_sha256 = sha256_file(path);
    built.manifest.vectors_fingerprint = file_fingerprint(path);
}

// Each cache of the whole old corpus computed on the CPU is updated into the new directory.
void update_caches(AddState& st, import_detail::BuiltCorpus& built) {
    const fs::path cache_dir = fs::path(st.base.dir()) / "cache";
    std::error_code ec;
    if (!fs::is_directory(cache_dir, ec)) return;
    const std::regex name(R"(selfjoin-q(\d+)-k(\d+)-rows(\d+)\.bin)");
    const NpyMatrix vectors = NpyMatrix::open((fs::path(built.dir) / "vectors.npy").string());
    for (const auto& entry : fs::directory_iterator(cache_dir)) {
        const std::string file = entry.path().filename().string();
        std::smatch m;
        SelfJoin old;
        bool usable = false;
        try {  // a damaged cache is dropped like any other that cannot be carried over
            usable = std::regex_match(file, m, name) && std::stoull(m[3]) == st.base.size() &&
                     read_self_join(entry.path().string(), st.base.manifest().vectors_sha256, st.base.size(),
                                    std::stoull(m[1]), std::stoull(m[2]), old) &&
                     old.computed_by == "cpu";
        } catch (const CorpusError&) {
            usable = false;
        }
        if (!usable) {
            st.summary.caches_dropped.push_back(file);
            continue;
        }
        SelfJoinUpdateStats stats;
        const auto started = std::chrono::steady_clock::now();
        const SelfJoin join = update_self_join(old, built.old_row_of_new, VectorView::of(vectors), 0, &stats);
        const std::string out = "selfjoin-q" + std::string(m[1]) + "-k" + std::string(m[2]) + "-rows" +
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
    m.updates.push_back({utc_now_iso8601(), s.n_added, s.n_removed,
                         s.first_renumbered_row ? static_cast<std::int64_t>(*s.first_renumbered_row) : -1,
                         s.caches_updated.size()});
}

}  // namespace

AddPapersSummary add_papers(const std::string& dir, const AddPapersOptions& options) {
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
    AddState st{options, base, summary};
    const auto finish = [&](import_detail::BuiltCorpus& built) { finish_add(st, built); };
    if (keyed_layout(base.dir())) {
        try {
            import_detail::import_onto(import, base.dir(), finish, true);
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
