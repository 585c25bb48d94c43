// novelty corpus embed: batches of papers through an Embedder, saved as they finish.
//   DIR/embed.partial.f32   float32 rows, appended batch by batch
//   DIR/embed.partial.json  {"embedder", "dim", "rows", "papers_sha256"}: rows known to be complete
#include "corpus/corpus_lock.hpp"
#include "corpus/corpus_recovery.hpp"
#include "util/file_util.hpp"
#include "util/kill_point.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_embed.hpp"
#include "novelty/util/error.hpp"

#include "io/json/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace novelty {

namespace fs = std::filesystem;

namespace {

/// Reads an interrupted run's state: rows done and their dimension. Throws when it was made by
/// another embedder or from other papers, or cannot be read.
void read_embed_state(const std::string& state_path, const std::string& embedder_name, const std::string& papers_sha,
                      std::size_t& done, std::size_t& dim) {
    nlohmann::json state;
    try {
        std::ifstream in(state_path);
        std::stringstream text;
        text << in.rdbuf();
        state = parse_json(text.str());
    } catch (const std::exception& e) {  // JsonError, or a read error
        throw CorpusError(state_path + ": unreadable (" + e.what() + "); delete embed.partial.* to start over");
    }
    if (state.value("embedder", "") != embedder_name)
        throw UsageError("the interrupted run used embedder '" + state.value("embedder", "") + "', not '" + embedder_name +
                         "'; use the same --embedder or delete embed.partial.*");
    if (state.value("papers_sha256", "") != papers_sha)
        throw UsageError("the corpus papers changed since the interrupted run; delete embed.partial.* to start over");
    done = state.value("rows", std::size_t{0});
    dim = state.value("dim", std::size_t{0});
}

/// Stages the n x dim float32 rows of `rows_path` as a .npy (`staged`) and attaches it in
/// corpus row order.
void attach_rows(const std::string& dir, const std::string& rows_path, const std::string& staged, std::size_t n,
                 std::size_t dim, Embedder& embedder, DType dtype) {
    {
        NpyWriter writer(staged, dtype, dim);
        std::ifstream in(rows_path, std::ios::binary);
        std::vector<float> buffer(std::max<std::size_t>(1, (1u << 22) / (dim * sizeof(float))) * dim);
        for (std::size_t row = 0; row < n;) {
            const std::size_t count = std::min(buffer.size() / dim, n - row);
            in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(count * dim * sizeof(float)));
            if (!in) throw Error(rows_path + ": shorter than the saved state says; delete embed.partial.* and run again");
            writer.append_f32(buffer.data(), count);
            row += count;
        }
        writer.finish();
    }
    kill_point("embed:before-attaching");
    AddVectorsOptions add;
    add.order = VectorOrder::corpus;
    add.vectors_path = staged;
    add.dtype = dtype;
    add.embedder = EmbedderInfo{embedder.name(), dim, embedder.pooling(), embedder.device(), embedder.precision()};
    add_vectors(dir, add);
}

}  // namespace

std::size_t embed_corpus(const std::string& dir, Embedder& embedder, const EmbedCorpusOptions& options) {
    if (options.batch == 0) throw UsageError("the batch size must be at least 1");
    const FolderWriterLock one_writer_at_a_time(corpus_dir_path(dir).parent_path());  // not across a corpus add
    // Papers only: vectors.npy is about to be replaced, and may be the remains of an interrupted run.
    const Corpus corpus = Corpus::open(dir, Corpus::Part::papers);
    const std::size_t n = corpus.size();
    const fs::path root(dir);
    const std::string rows_path = (root / "embed.partial.f32").string();
    const std::string state_path = (root / "embed.partial.json").string();
    const std::string papers_sha = corpus.manifest().papers_sha256;

    std::size_t done = 0, dim = embedder.dim();
    if (fs::exists(state_path)) {
        if (!options.resume)
            throw UsageError(dir + " holds an interrupted embedding run (embed.partial.*): resume it, or delete those "
                                   "files to start over",
                             "resume");
        read_embed_state(state_path, embedder.name(), papers_sha, done, dim);
    } else {
        std::error_code ec;
        fs::remove(rows_path, ec);
    }
    // Only complete rows count: cut anything written after the last saved state.
    if (fs::exists(rows_path)) fs::resize_file(rows_path, done * dim * sizeof(float));
    const std::size_t start = done;

    std::FILE* rows = std::fopen(rows_path.c_str(), "ab");
    if (!rows) throw Error(rows_path + ": cannot write: " + std::strerror(errno));
    struct Closer {
        std::FILE* f;
        ~Closer() { std::fclose(f); }
    } closer{rows};
    std::vector<std::string> texts;
    if (options.on_progress) options.on_progress(done, n);
    while (done < n) {
        const std::size_t count = std::min(options.batch, n - done);
        texts.clear();
        for (std::size_t row = done; row < done + count; ++row) {
            const Paper p = corpus.paper(row);
            texts.push_back(embedding_text(p.title, p.abstract));
        }
        const std::vector<float> vectors = embedder.embed(texts);
        const std::size_t got_dim = count ? vectors.size() / count : 0;
        if (got_dim == 0 || vectors.size() != count * got_dim)
            throw Error("the embedder returned " + std::to_string(vectors.size()) + " values for " + std::to_string(count) +
                        " texts");
        if (dim == 0) dim = got_dim;
        if (got_dim != dim)
            throw Error("the embedder returned vectors of dimension " + std::to_string(got_dim) + " after " +
                        std::to_string(dim));
        if (std::fwrite(vectors.data(), sizeof(float), vectors.size(), rows) != vectors.size() || std::fflush(rows) != 0 ||
            ::fsync(::fileno(rows)) != 0)
            throw Error(rows_path + ": write failed: " + std::strerror(errno));
        kill_point("embed:batch-written");
        done += count;
        const nlohmann::json state{{"embedder", embedder.name()}, {"dim", dim}, {"rows", done}, {"papers_sha256", papers_sha}};
        write_file_atomic(state_path, state.dump() + "\n");
        if (options.on_progress) options.on_progress(done, n);
    }

    // All rows are in: attach them.
    const std::string staged = (root / "embed.partial.npy").string();
    attach_rows(dir, rows_path, staged, n, dim, embedder, options.dtype);
    kill_point("embed:before-cleanup");
    for (const auto& path : {staged, rows_path, state_path}) fs::remove(path);
    return n - start;
}

}  // namespace novelty
