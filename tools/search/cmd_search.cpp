// novelty search: exact cosine top-k of queries against a corpus; novelty index: the cached
// self-join (neighbour densities).
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"
#include "record_sink.hpp"

#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/io/npz.hpp"
#include "novelty/request/result_json.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <utility>
#include <future>
#include <sstream>

namespace novelty::cli {

namespace {

constexpr std::size_t queries_per_batch = 4096;

struct SearchArgs {
    std::string corpus;
    QueryFlags queries;
    std::size_t k = 10;
    std::string out;
    bool resume = false;
    DeviceFlags device;
};

/// Where search results go: a table on stdout or JSON Lines (through the one RecordSink, which
/// resumes), or numpy arrays (.npz).
class SearchSink {
public:
    virtual ~SearchSink() = default;
    /// Queries finished by an earlier, interrupted run (--resume).
    virtual const std::set<std::string>& done() const { return no_finished_ids(); }
    /// Results of queries [begin, begin + top.n_queries).
    virtual void add(const QueryInput& input, std::size_t begin, const TopK& top) = 0;
    virtual void finish() = 0;
};

/// The table (stdout) or JSON Lines (one line per query, resumable): ids and titles looked up
/// once per batch, lines formatted on all cores, and written by a background thread while the next
/// batch is searched (writing waits on the disk, not on the cores the search uses).
class RecordSearchSink final : public SearchSink {
public:
    RecordSearchSink(const Corpus& corpus, const QueryInput& input, const std::string& out, bool resume,
                     std::size_t threads)
        : corpus_(corpus), input_(input), sink_(out, RecordSink::Kind::jsonl, resume, "", "", "query"),
          threads_(threads) {}
    const std::set<std::string>& done() const override { return sink_.done(); }
    void add(const QueryInput& input, std::size_t begin, const TopK& top) override {
        const PaperLabels labels = corpus_.labels(top.rows);
        const bool table = sink_.kind() == RecordSink::Kind::table;
        const std::string text = format_lines(
            top.n_queries,
            [&](std::size_t local, std::string& line) {
                const std::size_t i = begin + local;
                if (table)
                    append_table_entry(line, labels, input, i, top, local);
                else
                    append_search_result_json(line, labels, input.records[i].id, top, local, input.scopes[i].cutoff,
                                              input.scopes[i].row_limit);
            },
            threads_);
        std::vector<std::string> ids;
        for (std::size_t local = 0; local < top.n_queries; ++local) ids.push_back(input.records[begin + local].id);
        wait_for_write();  // the previous batch's lines go first
        pending_write_ = std::async(std::launch::async, [this, ids = std::move(ids), text = std::move(text)] {
            sink_.write_lines(ids, text);
        });
    }
    void finish() override {
        wait_for_write();
        std::vector<std::string> ids;
        for (const QueryRecord& record : input_.records) ids.push_back(record.id);
        sink_.finish(ids);
    }

private:
    /// A query's block of the table: its id (and cutoff), then one line per neighbour.
    static void append_table_entry(std::string& out, const PaperLabels& labels, const QueryInput& input, std::size_t i,
                                   const TopK& top, std::size_t local) {
        out += "query " + input.records[i].id;
        if (!input.scopes[i].cutoff.empty()) out += " (cutoff " + input.scopes[i].cutoff + ")";
        if (top.count[local] == 0) out += "\n  (no searchable papers)";
        char head[64];
        for (std::size_t r = 0; r < top.count[local]; ++r) {
            const std::size_t at = labels.index_of_input[local * top.k + r];
            std::snprintf(head, sizeof head, "\n  %3zu. %.4f  ", r + 1, top.sim(local, r));
            out += head + labels.ids[at] + "  " + labels.titles[at].substr(0, 90);
        }
    }

    /// Waits for the last batch's write; rethrows its error.
    void wait_for_write() {
        if (pending_write_.valid()) pending_write_.get();
    }

    const Corpus& corpus_;
    const QueryInput& input_;
    RecordSink sink_;
    std::size_t threads_;
    std::future<void> pending_write_;  ///< last, so that it is waited for before the sink closes
};

/// Arrays in the numpy convention (docs/formats.md): sims, rows, ids, counts, queries, searchable.
class NpzSink final : public SearchSink {
public:
    NpzSink(const Corpus& corpus, const QueryInput& input, const std::string& path, std::size_t k)
        : corpus_(corpus), input_(input), path_(path), k_(k) {
        sims_.reserve(input.records.size() * k);
        rows_.reserve(input.records.size() * k);
    }
    void add(const QueryInput&, std::size_t, const TopK& top) override {
        sims_.insert(sims_.end(), top.sims.begin(), top.sims.end());
        rows_.insert(rows_.end(), top.rows.begin(), top.rows.end());
        for (std::size_t c : top.count) counts_.push_back(static_cast<std::int64_t>(c));
    }
    void finish() override {
        const QueryInput& input = input_;
        const std::size_t n = counts_.size();
        const PaperLabels labels = corpus_.labels(rows_, false);
        std::size_t id_width = 1, query_width = 1;
        for (const auto& id : labels.ids) id_width = std::max(id_width, utf8_length(id));
        for (const auto& record : input.records) query_width = std::max(query_width, utf8_length(record.id));
        NpzWriter npz(path_);
        npz.begin_array("sims", "<f4", {n, k_}, 4);
        npz.write(sims_.data(), sims_.size() * sizeof(float));
        npz.begin_array("rows", "<i8", {n, k_}, 8);
        npz.write(rows_.data(), rows_.size() * sizeof(std::int64_t));
        npz.begin_array("counts", "<i8", {n}, 8);
        npz.write(counts_.data(), counts_.size() * sizeof(std::int64_t));
        std::vector<std::int64_t> searchable;
        for (const RecordScope& scope : input.scopes) searchable.push_back(static_cast<std::int64_t>(scope.row_limit));
        npz.begin_array("searchable", "<i8", {n}, 8);
        npz.write(searchable.data(), searchable.size() * sizeof(std::int64_t));
        npz.begin_array("ids", "<U" + std::to_string(id_width), {n, k_}, 4 * id_width);
        std::vector<char> chunk;
        for (std::size_t i = 0; i < n; ++i) {
            chunk.clear();
            for (std::size_t r = 0; r < k_; ++r) {
                const std::uint32_t at = labels.index_of_input[i * k_ + r];
                append_utf32_item(chunk, at == PaperLabels::no_row ? std::string() : labels.ids[at], id_width);
            }
            npz.write(chunk.data(), chunk.size());
        }
        npz.begin_array("queries", "<U" + std::to_string(query_width), {n}, 4 * query_width);
        chunk.clear();
        for (const auto& record : input.records) append_utf32_item(chunk, record.id, query_width);
        npz.write(chunk.data(), chunk.size());
        npz.commit();
    }

private:
    const Corpus& corpus_;
    const QueryInput& input_;
    std::string path_;
    std::size_t k_;
    std::vector<float> sims_;
    std::vector<std::int64_t> rows_, counts_;
};

void report_search_notes(const QueryInput& input, std::size_t n_short, std::size_t k, const std::string& out,
                         std::size_t n_resumed) {
    std::size_t n_unknown = 0;
    for (const RecordScope& scope : input.scopes) n_unknown += scope.unknown_excluded > 0;
    if (n_short > 0)
        std::fprintf(stderr, "novelty: note: %s had fewer than %zu searchable papers; all of theirs were returned\n",
                     count_of(n_short, "query").c_str(), k);
    if (n_unknown > 0)
        std::fprintf(stderr, "novelty: note: %s listed excluded ids that are not in the corpus\n",
                     count_of(n_unknown, "query").c_str());
    if (!out.empty())
        std::fprintf(stderr, "novelty: wrote %s to %s%s\n", count_of(input.records.size(), "result").c_str(), out.c_str(),
                     n_resumed == 0 ? "" : (" (" + thousands(n_resumed) + " from an earlier run)").c_str());
}

std::unique_ptr<SearchSink> make_search_sink(const Corpus& corpus, const QueryInput& input, const SearchArgs& args) {
    if (args.out.ends_with(".npz")) {
        if (args.resume) throw UsageError("--resume continues a JSON Lines --out file; .npz arrays are written whole");
        return std::make_unique<NpzSink>(corpus, input, args.out, args.k);
    }
    if (args.resume && args.out.empty()) throw UsageError("--resume continues an --out file; none was given");
    return std::make_unique<RecordSearchSink>(corpus, input, args.out, args.resume, args.queries.threads);
}

int run_search(const SearchArgs& args) {
    refuse_output_over_inputs("--out", args.out, {args.queries.path, args.queries.vectors});
    const Corpus corpus = Corpus::open(args.corpus);
    const QueryInput input = load_queries(corpus, args.queries, "queries");
    auto backend = make_search_backend(args.device, args.queries.threads, args.queries.quiet);
    const std::unique_ptr<SearchIndex> index = make_index(corpus, *backend, args.device);
    const std::unique_ptr<SearchSink> sink = make_search_sink(corpus, input, args);
    const auto runs = pending_runs(input, sink->done(), queries_per_batch);
    std::size_t n_todo = 0, n_searched = 0, n_short = 0;
    for (const auto& [begin, end] : runs) n_todo += end - begin;
    host::ProgressBar bar("search", "queries", args.queries.quiet || args.out.empty());
    for (const auto& [begin, end] : runs) {
        const TopK top = index->search(input.queries(begin, end), args.k);
        for (std::size_t local = 0; local < top.n_queries; ++local) n_short += top.count[local] < args.k;
        sink->add(input, begin, top);
        n_searched += end - begin;
        bar.update(n_searched, n_todo);
    }
    sink->finish();
    bar.finish();
    report_search_notes(input, n_short, args.k, args.out, input.records.size() - n_todo);
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
    const std::unique_ptr<SearchIndex> index = make_index(corpus, *backend, args.device);
    host::ProgressBar bar("index", "blocks", args.quiet);
    bool from_cache = false;
    const auto start = std::chrono::steady_clock::now();
    // A damaged cache is what `index` is for: computed again, with a note (score reports it and
    // computes the densities it needs on demand).
    if (const auto problem = remove_damaged_self_join(corpus, n_rows, args.q, std::max(k_stored, args.q)))
        std::fprintf(stderr, "novelty: note: %s; computing it again\n", problem->c_str());
    const SelfJoin join = cached_self_join(corpus, *index, n_rows, args.q, std::max(k_stored, args.q),
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
                       "Write the results here: JSON Lines (one result per query, in input order), or numpy arrays "
                       "when the name ends in .npz (sims, rows, ids, counts, queries, searchable; docs/formats.md); "
                       "default: a table on stdout");
    search->add_flag("--resume", search_args->resume,
                     "Continue an interrupted run writing JSON Lines: queries already in OUT.partial are skipped");
    search->add_option("--threads", search_args->queries.threads, "Worker threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    add_device_flags(search, search_args->device);
    add_embedder_flags(*search, search_args->queries.embedder);
    add_filter_flags(*search, search_args->queries.filter);
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
                      "Neighbours kept beyond q, so that leaving papers out stays exact (default 8)")
        ->check(CLI::NonNegativeNumber);
    index->add_option("--cutoff", index_args->cutoff,
                      "Join only the papers published on or before this date (a row prefix); default: all papers");
    index->add_option("--threads", index_args->threads, "Worker threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    add_device_flags(index, index_args->device);
    index->add_flag("-q,--quiet", index_args->quiet, "No progress on stderr");
    index->callback([index_args, &exit_code] { exit_code = run_guarded([&] { return run_index(*index_args); }); });
}

}  // namespace novelty::cli
