// novelty search: exact cosine top-k of queries against a corpus; novelty index: the cached
// self-join (neighbour densities).
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"

#include "novelty/atomic_file.hpp"
#include "novelty/error.hpp"
#include "novelty/neighbor_cache.hpp"
#include "novelty/result_json.hpp"
#include "novelty_host/progress.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <filesystem>
#include <sstream>

namespace novelty::cli {

namespace {

constexpr std::size_t queries_per_batch = 4096;

struct SearchArgs {
    std::string corpus;
    QueryFlags queries;
    std::size_t k = 10;
    std::string out;
    DeviceFlags device;
};

int run_search(const SearchArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.queries.path, args.queries.vectors});
    const Corpus corpus = Corpus::open(args.corpus);
    const QueryInput input = load_queries(corpus, args.queries, "queries");
    const std::size_t n = input.records.size();

    auto backend = make_search_backend(args.device, args.queries.threads, args.queries.quiet);
    std::unique_ptr<AtomicFile> out;
    if (!args.out.empty()) out = std::make_unique<AtomicFile>(args.out);
    host::ProgressBar bar("search", "queries", args.queries.quiet || args.out.empty());
    std::size_t n_short = 0, n_unknown = 0;
    for (std::size_t begin = 0; begin < n; begin += queries_per_batch) {
        const std::size_t end = std::min(n, begin + queries_per_batch);
        const TopK top = backend->search(VectorView::of(corpus.vectors()), query_slice(input, begin, end), args.k);
        std::string text;
        for (std::size_t i = begin; i < end; ++i) {
            const std::size_t local = i - begin;
            if (top.count[local] < args.k) ++n_short;
            if (input.unknown_excluded[i] > 0) ++n_unknown;
            if (out) {
                text += search_result_json(corpus, input.records[i].id, top, local, input.cutoff[i], input.row_limit[i]) + "\n";
            } else {
                std::printf("query %s%s\n", input.records[i].id.c_str(),
                            input.cutoff[i].empty() ? "" : (" (cutoff " + input.cutoff[i] + ")").c_str());
                if (top.count[local] == 0) std::printf("  (no searchable papers)\n");
                for (std::size_t r = 0; r < top.count[local]; ++r) {
                    const auto [id, title] = corpus.id_and_title(static_cast<std::size_t>(top.row(local, r)));
                    std::printf("  %3zu. %.4f  %s  %s\n", r + 1, top.sim(local, r), id.c_str(), title.substr(0, 90).c_str());
                }
            }
        }
        if (out) out->write(text.data(), text.size());
        bar.update(end, n);
    }
    if (out) out->commit();
    bar.finish();
    if (n_short > 0)
        std::fprintf(stderr, "novelty: note: %s had fewer than %zu searchable papers; all of theirs were returned\n",
                     count_of(n_short, "query").c_str(), args.k);
    if (n_unknown > 0)
        std::fprintf(stderr, "novelty: note: %s listed excluded ids that are not in the corpus\n",
                     count_of(n_unknown, "query").c_str());
    if (out) std::fprintf(stderr, "novelty: wrote %s to %s\n", count_of(n, "result").c_str(), args.out.c_str());
    return exit_ok;
}

struct IndexArgs {
    std::string dir;
    std::size_t q = 50;
    std::size_t extra = default_extra_neighbors;
    std::string cutoff;
    std::size_t threads = 0;
    bool quiet = false;
    DeviceFlags device;
};

int run_index(const IndexArgs& args) {
    const Corpus corpus = Corpus::open(args.dir);
    const std::size_t n_rows = args.cutoff.empty() ? corpus.size() : corpus.rows_through(parse_cutoff(args.cutoff));
    if (n_rows < 2) throw UsageError("the self-join needs at least 2 papers; the prefix has " + std::to_string(n_rows));
    if (args.q >= n_rows)
        throw UsageError("--q " + std::to_string(args.q) + " needs more than " + std::to_string(args.q) +
                         " papers, and the corpus" + (args.cutoff.empty() ? "" : " up to " + args.cutoff) + " has " +
                         std::to_string(n_rows));
    const std::size_t k_stored = std::min(args.q + args.extra, std::min(n_rows - 1, SearchBackend::max_k));
    auto backend = make_search_backend(args.device, args.threads, args.quiet);
    host::ProgressBar bar("index", "blocks", args.quiet);
    bool from_cache = false;
    const auto start = std::chrono::steady_clock::now();
    {
        // A damaged cache is what `index` is for: computed again, with a note, where score refuses it.
        const std::string path = self_join_cache_path(corpus, n_rows, args.q, std::max(k_stored, args.q));
        SelfJoin unused;
        try {
            read_self_join(path, corpus.manifest().vectors_sha256, n_rows, args.q, std::max(k_stored, args.q), unused);
        } catch (const CorpusError& e) {
            std::fprintf(stderr, "novelty: note: %s; computing it again\n", e.what());
            std::filesystem::remove(path);
        }
    }
    const SelfJoin join = cached_self_join(corpus, *backend, n_rows, args.q, std::max(k_stored, args.q),
                                           [&](std::size_t done, std::size_t total) { bar.update(done, total); },
                                           &from_cache);
    bar.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double sum = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (float d : join.density) {
        sum += d;
        lo = std::min(lo, d);
        hi = std::max(hi, d);
    }
    std::printf("neighbour densities of %s (q=%zu, %zu kept per paper) %s in %.1fs\n",
                count_of(n_rows, "paper").c_str(), args.q, join.k_stored, from_cache ? "loaded from the cache" : "computed",
                seconds);
    std::printf("density: mean %.4f, min %.4f, max %.4f (mean cosine distance to the %zu nearest papers)\n",
                sum / static_cast<double>(n_rows), lo, hi, args.q);
    std::printf("cache: %s\n", self_join_cache_path(corpus, n_rows, args.q, join.k_stored).c_str());
    return exit_ok;
}

}  // namespace

void add_search_commands(CLI::App& app, int& exit_code) {
    auto search_args = std::make_shared<SearchArgs>();
    CLI::App* search = app.add_subcommand(
        "search", "Exact cosine top-k of each query against a corpus, optionally limited to papers published on or "
                  "before a cutoff date and leaving listed papers out");
    search->add_option("--corpus", search_args->corpus, "Corpus directory (with vectors)")->required();
    search->add_option("--queries", search_args->queries.path,
                       "Queries: .jsonl with an \"id\" and \"title\"/\"text\" per line (embedded with the corpus's "
                       "encoder; optional \"date\" cutoff and \"exclude\" ids; a record without text whose id is a "
                       "corpus paper searches as that paper), or an N x D .npy")
        ->required();
    search->add_option("--vectors", search_args->queries.vectors,
                       "N x D .npy holding the vector of each line of a .jsonl query file (row i = line i)");
    search->add_option("--k", search_args->k, "Neighbours per query, 1-2048 (default 10)")
        ->check(CLI::Range(std::size_t{1}, SearchBackend::max_k));
    search->add_option("--cutoff", search_args->queries.cutoff,
                       "Only papers published on or before this date (YYYY, YYYY-MM or YYYY-MM-DD) for queries without "
                       "their own \"date\"");
    search->add_option("--exclude", search_args->queries.exclude, "Comma-separated paper ids left out for every query");
    search->add_option("--out", search_args->out,
                       "Write JSON Lines here (one result per query, in input order); default: a table on stdout");
    search->add_option("--threads", search_args->queries.threads, "Worker threads (default: all cores)");
    add_device_flags(search, search_args->device);
    add_embedder_flags(*search, search_args->queries.embedder);
    search->add_flag("-q,--quiet", search_args->queries.quiet, "No progress on stderr");
    search->callback([search_args, &exit_code] { exit_code = run_guarded([&] { return run_search(*search_args); }); });

    auto index_args = std::make_shared<IndexArgs>();
    CLI::App* index = app.add_subcommand(
        "index", "Compute each paper's nearest neighbours and neighbour density (the self-join) and cache them in the "
                 "corpus directory; later runs with the same parameters load the cache");
    index->add_option("dir", index_args->dir, "Corpus directory (with vectors)")->required();
    index->add_option("--q", index_args->q, "Neighbours averaged into each paper's density (default 50)")
        ->check(CLI::Range(std::size_t{1}, SearchBackend::max_k));
    index->add_option("--extra", index_args->extra,
                      "Neighbours kept beyond q, so that leaving papers out stays exact (default 8)");
    index->add_option("--cutoff", index_args->cutoff,
                      "Join only the papers published on or before this date (a row prefix); default: all papers");
    index->add_option("--threads", index_args->threads, "Worker threads (default: all cores)");
    add_device_flags(index, index_args->device);
    index->add_flag("-q,--quiet", index_args->quiet, "No progress on stderr");
    index->callback([index_args, &exit_code] { exit_code = run_guarded([&] { return run_index(*index_args); }); });
}

}  // namespace novelty::cli
