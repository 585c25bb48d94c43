// novelty retrieve: date-cutoff literature retrieval (dense, BM25, reciprocal-rank fusion, and
// fusion over query rewrites), written as a TREC run and/or JSON Lines with titles.
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"
#include "record_sink.hpp"
#include "retrieve_llm.hpp"

#include "util/message_text.hpp"
#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/request/retrieval_run.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>

namespace novelty::cli {

namespace {

constexpr std::size_t queries_per_batch = 1024;

struct RetrieveArgs {
    QueryFlags queries;
    std::string corpus;
    std::string methods = "dense,bm25,hybrid";
    std::size_t k = 100;
    std::size_t fusion_depth = 1000;
    std::string out;
    std::string jsonl;
    std::size_t expand = 0;
    std::string expand_mode = "multi";
    std::size_t hyde = 0;
    bool fuse_original = false;
    RetrieveLlmFlags llm;
    std::string rewrites;
    bool resume = false;
    DeviceFlags device;
};

std::vector<std::string> parse_methods(const std::string& list) {
    std::vector<std::string> methods;
    for (const std::string& name : split_ids(list)) {
        if (name != "dense" && name != "bm25" && name != "hybrid")
            throw UsageError("--methods: unknown method '" + name + "' (choose from dense, bm25, hybrid)");
        for (const auto& seen : methods)
            if (seen == name) throw UsageError("--methods names '" + name + "' twice");
        methods.push_back(name);
    }
    if (methods.empty()) throw UsageError("--methods needs at least one of dense, bm25, hybrid");
    return methods;
}

/// The CLI's side of a retrieval: the index, the encoder (made when a rewrite is first
/// embedded) and the request layer's ranker over both.
class Retrieval {
public:
    Retrieval(const Corpus& corpus, const RetrieveArgs& args, RetrievalSettings settings, std::vector<RewriteMode> modes)
        : corpus_(corpus), args_(args),
          ranker_(corpus, std::move(settings), std::move(modes),
                  [this](const SearchQueries& q, std::size_t depth) { return dense_rankings(*index_, q, depth); },
                  [this](const std::vector<std::string>& texts) { return embed_texts(texts); }) {
        if (ranker_.need_dense()) {
            backend_ = make_search_backend(args.device, args.queries.threads, args.queries.quiet);
            index_ = make_index(corpus_, *backend_, args.device);
        }
    }

    RetrievalRanker& ranker() { return ranker_; }

private:
    std::vector<float> embed_texts(const std::vector<std::string>& texts) {
        if (texts.empty()) return {};
        if (!embedder_) {
            EmbedderFlags flags = args_.queries.embedder;
            flags.threads = args_.queries.threads;
            embedder_ = embedder_for_corpus(corpus_, flags);
        }
        return embedder_->embed(texts);
    }

    const Corpus& corpus_;
    const RetrieveArgs& args_;
    std::unique_ptr<SearchBackend> backend_;
    std::unique_ptr<SearchIndex> index_;  ///< the corpus loaded once, for every dense ranking
    std::unique_ptr<Embedder> embedder_;
    RetrievalRanker ranker_;
};

/// The run's settings and rewriting modes; the flags that give rewrites must go with a mode.
RetrievalSettings retrieval_settings(const RetrieveArgs& args, std::vector<RewriteMode>& modes) {
    RetrievalSettings s{parse_methods(args.methods), args.k,    args.fusion_depth, args.expand,
                        args.expand_mode,            args.hyde, args.fuse_original};
    if (args.expand == 0 && args.hyde == 0) {
        if (!args.llm.url.empty() || !args.rewrites.empty())
            throw UsageError("--llm and --rewrites go with --expand N or --hyde N");
    } else {
        if (!args.llm.url.empty() && !args.rewrites.empty())
            throw UsageError("--llm and --rewrites are alternatives: make the rewrites with an LLM, or read them from a file");
        if (args.llm.url.empty() && args.rewrites.empty())
            throw UsageError("--expand and --hyde need rewrites: --llm URL (an OpenAI-compatible server) or --rewrites FILE");
    }
    modes = retrieval_modes(s);
    return s;
}

std::string trec_lines(const std::string& qid, const std::string& tag, const Ranking& ranking, const Corpus& corpus) {
    std::string text;
    char score[64];
    for (std::size_t r = 0; r < ranking.size(); ++r) {
        std::snprintf(score, sizeof score, "%.9g", ranking.scores[r]);
        text += qid + " Q0 " + corpus.id_and_title(static_cast<std::size_t>(ranking.rows[r])).first + " " +
                std::to_string(r + 1) + " " + score + " " + tag + "\n";
    }
    return text;
}

/// Notes on queries that found nothing or fewer than k, and the LLM's failures and usage.
void report_retrieval(std::size_t n_empty, std::size_t n_short, const RetrieveArgs& args, host::LlmRewriting* llm) {
    if (n_empty > 0)
        std::fprintf(stderr, "novelty: note: %s found nothing (no searchable paper before the cutoff, or no matching term)\n",
                     count_of(n_empty, "query").c_str());
    if (n_short > n_empty)
        std::fprintf(stderr, "novelty: note: %s had fewer than %zu results for some method\n",
                     count_of(n_short - n_empty, "query").c_str(), args.k);
    if (!llm) return;
    if (llm->failures() > 0)
        std::fprintf(stderr, "novelty: warning: %s of query rewriting failed (those queries used their text alone)\n",
                     count_of(llm->failures(), "LLM call").c_str());
    if (!args.queries.quiet) std::fputs(llm->usage().c_str(), stderr);
}

/// Where a run writes: the TREC run (written whole) and/or the JSON Lines (through the one
/// resumable output; --resume continues it).
struct RetrieveOutputs {
    std::unique_ptr<AtomicFile> trec;
    std::unique_ptr<RecordSink> jsonl;
    std::string trec_path, jsonl_path;

    explicit RetrieveOutputs(const RetrieveArgs& args) {
        jsonl_path = !args.jsonl.empty() ? args.jsonl : (args.out.ends_with(".jsonl") ? args.out : "");
        trec_path = args.out.ends_with(".jsonl") ? "" : args.out;
        if (args.resume && !trec_path.empty())
            throw UsageError("--resume continues JSON Lines (--out FILE.jsonl or --jsonl FILE alone); a TREC run (--out " +
                             trec_path + ") is written whole");
        if (!jsonl_path.empty())
            jsonl = std::make_unique<RecordSink>(jsonl_path, RecordSink::Kind::jsonl, args.resume, "", "", "query");
        if (!trec_path.empty()) trec = std::make_unique<AtomicFile>(trec_path);
    }
    const std::set<std::string>& done() const { return jsonl ? jsonl->done() : no_finished_ids(); }
};

/// The queries with what the ranker needs: vectors for a dense ranking, texts (the record's, else
/// its corpus paper's) for BM25 and the rewriters.
QueryInput load_retrieval_queries(const Corpus& corpus, const RetrieveArgs& args, const RetrievalRanker& ranker) {
    if (ranker.need_text() && args.queries.path.ends_with(".npy"))
        throw UsageError("BM25, hybrid and rewrites need query text; a .npy query file has none");
    ResolveOptions needs;
    needs.vectors = ranker.need_dense();
    needs.texts = ranker.need_text();
    QueryInput input = load_queries(corpus, args.queries, "queries", std::move(needs));
    if (input.texts.empty()) input.texts.resize(input.size());
    return input;
}

/// Writes one batch's rankings; counts queries that found nothing and those short of k.
void write_batch(RetrieveOutputs& out, const Corpus& corpus, const QueryInput& input, std::size_t begin,
                 const std::vector<RankingsByTag>& ranked, RetrievalRanker& ranker, const RewritesById& rewrites,
                 std::size_t k, std::size_t& n_empty, std::size_t& n_short) {
    const std::vector<std::string> tags = ranker.tags();
    std::string trec_text, jsonl_text;
    std::vector<std::string> ids;
    for (std::size_t j = 0; j < ranked.size(); ++j) {
        const std::size_t i = begin + j;
        const std::string& qid = input.records[i].id;
        bool any_short = false, all_empty = true;
        for (const auto& tag : tags) {
            const Ranking& r = ranked[j].at(tag);
            any_short = any_short || r.size() < k;
            all_empty = all_empty && r.size() == 0;
            if (out.trec) trec_text += trec_lines(qid, tag, r, corpus);
        }
        n_empty += all_empty;
        n_short += any_short;
        ids.push_back(qid);
        if (out.jsonl)
            jsonl_text += retrieval_record_json(corpus, qid, input.scopes[i].cutoff, input.scopes[i].row_limit, ranked[j],
                                                tags, ranker.modes(), rewrites) + "\n";
    }
    if (out.trec) out.trec->write(trec_text.data(), trec_text.size());
    if (out.jsonl) out.jsonl->write_lines(ids, jsonl_text);
}

int run_retrieve(const RetrieveArgs& args) {
    for (const auto& [flag, out] : {std::pair{"--out", args.out}, std::pair{"--jsonl", args.jsonl}})
        refuse_output_over_inputs(flag, out, {args.queries.path, args.queries.vectors, args.rewrites});
    std::vector<RewriteMode> modes;
    RetrievalSettings settings = retrieval_settings(args, modes);
    if (args.out.empty() && args.jsonl.empty()) throw UsageError("give --out FILE (and/or --jsonl FILE)");
    const Corpus corpus = Corpus::open(args.corpus);
    Retrieval retrieval(corpus, args, std::move(settings), modes);
    RetrievalRanker& ranker = retrieval.ranker();
    const QueryInput input = load_retrieval_queries(corpus, args, ranker);
    const std::size_t n = input.records.size();
    const std::vector<std::string>& texts = input.texts;
    const RewritesById file_rewrites = args.rewrites.empty() ? RewritesById{} : read_rewrites_file(args.rewrites);
    std::unique_ptr<host::LlmRewriting> llm;
    std::vector<std::string> ids;
    for (const QueryRecord& r : input.records) ids.push_back(r.id);
    if (!args.llm.url.empty()) llm = open_llm_rewriting(args.llm, corpus.dir(), modes);
    const auto note_failure = [&args](const std::string& id, const std::string& mode, const std::string& error) {
        if (!args.queries.quiet)
            std::fprintf(stderr, "novelty: note: query '%s': LLM %s failed (%s); it uses the query text alone\n",
                         id.c_str(), mode.c_str(), error.c_str());
    };

    RetrieveOutputs out(args);
    const auto runs = pending_runs(input, out.done(), queries_per_batch);
    std::size_t n_todo = 0, n_done = 0;
    for (const auto& [begin, end] : runs) n_todo += end - begin;
    host::ProgressBar bar("retrieve", "queries", args.queries.quiet);
    std::size_t n_empty = 0, n_short = 0;
    for (const auto& [begin, end] : runs) {
        const RewritesById llm_rewrites = llm ? llm->rewrite(ids, texts, begin, end, note_failure) : RewritesById{};
        const RewritesById& rewrites = llm ? llm_rewrites : file_rewrites;
        // The queries give the scopes, and the vectors when a method is dense (none else).
        const RetrievalBatch batch{std::span(ids).subspan(begin, end - begin),
                                   std::span(texts).subspan(begin, end - begin), input.queries(begin, end)};
        const auto ranked = ranker.rank(batch, rewrites);
        write_batch(out, corpus, input, begin, ranked, ranker, rewrites, args.k, n_empty, n_short);
        n_done += end - begin;
        bar.update(n_done, n_todo);
    }
    if (out.trec) out.trec->commit();
    if (out.jsonl) out.jsonl->finish(ids);
    bar.finish();
    report_retrieval(n_empty, n_short, args, llm.get());
    if (out.trec)
        std::fprintf(stderr, "novelty: wrote the run of %s (%zu rankings) to %s\n", count_of(n, "query").c_str(),
                     ranker.tags().size(), out.trec_path.c_str());
    if (out.jsonl)
        std::fprintf(stderr, "novelty: wrote %s to %s%s\n", count_of(n, "result").c_str(), out.jsonl_path.c_str(),
                     n_todo == n ? "" : (" (" + thousands(n - n_todo) + " from an earlier run)").c_str());
    return exit_ok;
}

}  // namespace

void add_retrieve_command(CLI::App& app, int& exit_code) {
    auto args = std::make_shared<RetrieveArgs>();
    CLI::App* cmd = app.add_subcommand(
        "retrieve", "Retrieve prior papers for each query among those published on or before its cutoff date: dense, "
                    "BM25 and their reciprocal-rank fusion, written as a TREC run and/or JSON Lines");
    cmd->add_option("--corpus", args->corpus, "Corpus directory (vectors needed for dense and hybrid)")->required();
    cmd->add_option("--queries", args->queries.path,
                    "Queries: .jsonl with an \"id\", \"title\"/\"text\" and an optional \"date\" cutoff and "
                    "\"exclude\" ids per line (a record without text whose id is a corpus paper uses that paper)")
        ->required();
    cmd->add_option("--vectors", args->queries.vectors,
                    "N x D .npy holding the vector of each query line (default: embed the text)");
    cmd->add_option("--methods", args->methods, "Comma-separated: dense, bm25, hybrid (default all three)");
    cmd->add_option("--k", args->k, "Results per query and method, 1-2048 (default 100)")
        ->check(CLI::Range(std::size_t{1}, SearchBackend::max_k));
    cmd->add_option("--fusion-depth", args->fusion_depth,
                    "Rows of each ranking fed to reciprocal-rank fusion (default 1000; at least --k, at most 2048)")
        ->check(CLI::Range(std::size_t{1}, SearchBackend::max_k));
    cmd->add_option("--cutoff", args->queries.cutoff,
                    "Cutoff for queries without their own \"date\" (default: the whole corpus)");
    cmd->add_option("--exclude", args->queries.exclude, "Comma-separated paper ids left out for every query");
    cmd->add_option("--out", args->out, "Write the TREC run here (qid Q0 docid rank score tag; tag = method), or "
                                        "JSON Lines when the name ends in .jsonl");
    cmd->add_option("--jsonl", args->jsonl, "Also write JSON Lines with titles here (one line per query)");
    cmd->add_flag("--resume", args->resume,
                  "Continue an interrupted run writing JSON Lines: queries already in FILE.partial are skipped (not "
                  "with a TREC run, which is written whole)");
    cmd->add_option("--expand", args->expand,
                    "Query expansion: fuse the rankings of up to N augmented questions (--expand-mode multi), or rank "
                    "the question with one continuation appended (single; N = 1)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--expand-mode", args->expand_mode,
                    "multi (default; the paper's multi-query generation) or single (the paper's single-query "
                    "expansion: a continuation written by the LLM appended to the question)");
    cmd->add_option("--hyde", args->hyde,
                    "HyDE: fuse the rankings of up to N hypothetical abstracts of prior papers (the paper uses 5)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--fuse-original", args->fuse_original,
                  "Also rank the query text itself and fuse it with the --expand / --hyde texts (default off: the "
                  "paper fuses the generated texts only; a query whose rewriting failed always uses its own text)");
    cmd->add_option("--rewrites", args->rewrites,
                    "JSON Lines of rewrites made elsewhere: {\"id\", \"expand\": [...], \"hyde\": [...]}, or the "
                    "--jsonl output of an earlier run (instead of --llm)");
    add_retrieve_llm_flags(*cmd, args->llm);
    cmd->add_option("--threads", args->queries.threads, "Worker threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    add_device_flags(cmd, args->device);
    add_embedder_flags(*cmd, args->queries.embedder);
    add_filter_flags(*cmd, args->queries.filter);
    cmd->add_flag("-q,--quiet", args->queries.quiet, "No progress on stderr");
    cmd->callback([args, &exit_code] { exit_code = run_guarded([&] { return run_retrieve(*args); }); });
}

}  // namespace novelty::cli
