// novelty retrieve: date-cutoff literature retrieval (dense, BM25, reciprocal-rank fusion, and
// fusion over query rewrites), written as a TREC run and/or JSON Lines with titles.
#include "cli_common.hpp"
#include "device_choice.hpp"
#include "embedder_choice.hpp"
#include "query_input.hpp"
#include "retrieve_llm.hpp"
#include "rewrites_file.hpp"

#include "novelty/util/message_text.hpp"
#include "novelty/util/atomic_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"
#include "novelty_host/jobs/progress.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
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
    DeviceFlags device;
};

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

/// Queries for BM25 alone: no vectors needed, so nothing is embedded. Cutoffs and exclusions as
/// load_query_input() resolves them.
QueryInput load_text_queries(const Corpus& corpus, const QueryFlags& flags) {
    if (ends_with(flags.path, ".npy")) throw UsageError("BM25 needs query text; a .npy query file has none");
    QueryInput input;
    input.records = read_query_records(flags.path);
    std::optional<PartialDate> default_cutoff;
    if (!flags.cutoff.empty()) default_cutoff = parse_cutoff(flags.cutoff);
    input.scopes = resolve_scopes(corpus, input.records, default_cutoff, split_ids(flags.exclude), true);
    input.filters = record_filters(corpus, input.records, run_filter(flags.filter));
    return input;
}

/// The text BM25 and the rewriters read: the record's title and text, or, for a record without
/// text that names a corpus paper, that paper's title and abstract.
std::string query_text(const Corpus& corpus, const QueryRecord& r, const std::string& path) {
    if (r.has_text()) return embedding_text(r.title, r.text);
    if (const auto row = corpus.find_row(r.id)) {
        const Paper p = corpus.paper(*row);
        return embedding_text(p.title, p.abstract);
    }
    throw InputError(path, r.line, "query " + quote_value(r.id) + " has no text and is not the id of a corpus paper");
}

Ranking truncated(const Ranking& r, std::size_t k) {
    Ranking t = r;
    if (t.rows.size() > k) {
        t.rows.resize(k);
        t.scores.resize(k);
    }
    return t;
}

/// One rewriting mode (--expand or --hyde), its texts from --rewrites FILE or the --llm.
struct RewriteMode {
    std::string tag;          ///< "expand" | "hyde"
    std::size_t n = 0;        ///< rewrites per query
    bool include_original;    ///< the query text's own ranking is fused too (--fuse-original)
    bool append = false;      ///< single-query expansion: rank the query with its continuation appended
};

/// The texts one mode ranks for query text `query`: the rewrites (or, for single-query
/// expansion, the query with its continuation appended), with the query itself first when
/// `include_original`, and the query alone when there is no rewrite to rank.
std::vector<std::string> mode_texts(const RewriteMode& mode, QueryRewriter& rewriter, const std::string& query,
                                    bool include_original) {
    if (!mode.append) {
        std::vector<std::string> texts = rewritten_texts(rewriter, query, mode.n, include_original);
        if (texts.empty()) texts.push_back(query);  // no rewrite for this query: its own text
        return texts;
    }
    const std::vector<std::string> continuation = rewriter.rewrite(query, 1);
    std::vector<std::string> texts;
    if (include_original || continuation.empty()) texts.push_back(query);
    if (!continuation.empty()) texts.push_back(query + " " + continuation.front());
    return texts;
}

class Retrieval {
public:
    /// `rewriting`: some query texts are rewritten (their rankings are fused).
    Retrieval(const Corpus& corpus, const RetrieveArgs& args, std::vector<std::string> methods, bool rewriting)
        : corpus_(corpus), args_(args), methods_(std::move(methods)) {
        bool fusing = rewriting;
        for (const auto& m : methods_) {
            need_dense_ = need_dense_ || m != "bm25";
            need_bm25_ = need_bm25_ || m != "dense";
            fusing = fusing || m == "hybrid";
        }
        // Rankings that are only cut to k need no more than k rows; fused ones go deeper.
        depth_ = fusing ? std::max(args.k, std::min(args.fusion_depth, SearchBackend::max_k)) : args.k;
        if (need_bm25_) bm25_.emplace(corpus.dir());
        if (need_dense_) {
            backend_ = make_search_backend(args.device, args.queries.threads, args.queries.quiet);
            index_ = make_index(corpus_, *backend_, args.device);
        }
    }

    bool need_dense() const { return need_dense_; }

    /// Rankings of queries [begin, end) by method tag, each cut to k.
    std::vector<std::map<std::string, Ranking>> rank(const QueryInput& input, std::size_t begin, std::size_t end,
                                                     const std::vector<std::string>& texts,
                                                     const std::map<std::string, QueryRewrites>& rewrites,
                                                     const std::vector<RewriteMode>& modes) {
        std::vector<Ranking> dense;
        if (need_dense_)
            dense = dense_rankings(*index_, query_slice(input, begin, end), depth_);
        std::vector<std::map<std::string, Ranking>> out(end - begin);
        for (std::size_t i = begin; i < end; ++i) {
            const std::size_t local = i - begin;
            const std::span<const std::int64_t> excluded(input.scopes[i].excluded_rows);
            const RowFilter* filter = input.filters.empty() ? nullptr : input.filters[i].get();
            Ranking bm25;
            if (need_bm25_) bm25 = bm25_->rank(texts[i], input.scopes[i].row_limit, excluded, depth_, filter);
            for (const auto& m : methods_) {
                if (m == "dense") out[local][m] = truncated(dense[local], args_.k);
                if (m == "bm25") out[local][m] = truncated(bm25, args_.k);
                if (m == "hybrid") {
                    const std::vector<Ranking> both{dense[local], bm25};
                    out[local][m] = reciprocal_rank_fusion(both, args_.k);
                }
            }
            for (const RewriteMode& mode : modes) {
                const auto it = rewrites.find(input.records[i].id);
                ListRewriter rewriter(mode.tag, it == rewrites.end() ? std::vector<std::string>{}
                                                 : (mode.tag == "hyde" ? it->second.hyde : it->second.expand));
                // A failed LLM call leaves the query text alone (HyDE included).
                const bool failed = it != rewrites.end() &&
                                    !(mode.tag == "hyde" ? it->second.hyde_error : it->second.expand_error).empty();
                const std::vector<std::string> variants = mode_texts(mode, rewriter, texts[i], mode.include_original || failed);
                const auto vectors = embed_texts(variants);
                for (const auto& m : methods_) {
                    std::size_t v = 0;
                    const auto rank_text = [&](const std::string& text) {
                        std::vector<Ranking> rankings;
                        if (m != "bm25") rankings.push_back(dense_one(input, i, vectors, v));
                        if (m != "dense") rankings.push_back(bm25_->rank(text, input.scopes[i].row_limit, excluded, depth_, filter));
                        ++v;
                        return rankings;
                    };
                    out[local][m + "+" + mode.tag] = fuse_texts(variants, rank_text, args_.k);
                }
            }
        }
        return out;
    }

private:
    std::vector<float> embed_texts(const std::vector<std::string>& texts) {
        if (!need_dense_ || texts.empty()) return {};
        if (!embedder_) {
            EmbedderFlags flags = args_.queries.embedder;
            flags.threads = args_.queries.threads;
            embedder_ = embedder_for_corpus(corpus_, flags);
        }
        return embedder_->embed(texts);
    }

    Ranking dense_one(const QueryInput& input, std::size_t i, const std::vector<float>& vectors, std::size_t v) {
        const std::size_t dim = corpus_.manifest().dim;
        if (vectors.size() < (v + 1) * dim)
            throw UsageError("the encoder made vectors of another dimension than the corpus's " + std::to_string(dim));
        SearchQueries q;
        q.vectors = vectors.data() + v * dim;
        q.n_queries = 1;
        q.dim = dim;
        q.row_limit = {input.scopes[i].row_limit};
        q.excluded.add(input.scopes[i].excluded_rows);
        if (!input.filters.empty()) q.filters = {input.filters[i]};
        return dense_rankings(*index_, q, depth_)[0];
    }

    const Corpus& corpus_;
    const RetrieveArgs& args_;
    std::vector<std::string> methods_;
    bool need_dense_ = false, need_bm25_ = false;
    std::size_t depth_ = 0;
    std::optional<Bm25Index> bm25_;
    std::unique_ptr<SearchBackend> backend_;
    std::unique_ptr<SearchIndex> index_;  ///< the corpus loaded once, for every dense ranking
    std::unique_ptr<Embedder> embedder_;
};

std::vector<RewriteMode> rewrite_modes(const RetrieveArgs& args) {
    std::vector<RewriteMode> modes;
    if (args.expand == 0 && args.hyde == 0) {
        if (!args.llm.url.empty() || !args.rewrites.empty())
            throw UsageError("--llm and --rewrites go with --expand N or --hyde N");
        return modes;
    }
    if (!args.llm.url.empty() && !args.rewrites.empty())
        throw UsageError("--llm and --rewrites are alternatives: make the rewrites with an LLM, or read them from a file");
    if (args.llm.url.empty() && args.rewrites.empty())
        throw UsageError("--expand and --hyde need rewrites: --llm URL (an OpenAI-compatible server) or --rewrites FILE");
    if (args.expand_mode != "multi" && args.expand_mode != "single")
        throw UsageError("--expand-mode is '" + args.expand_mode + "'; choose multi or single");
    const bool single = args.expand_mode == "single";
    if (single && args.expand > 1)
        throw UsageError("--expand-mode single appends one continuation to the question: give --expand 1");
    if (args.expand > 0) modes.push_back({"expand", args.expand, args.fuse_original, single});
    if (args.hyde > 0) modes.push_back({"hyde", args.hyde, args.fuse_original, false});
    return modes;
}

/// Records the rewrites a query's fusion used (the first n of each mode's list) under
/// "rewrites", and failed LLM calls under "rewrite_errors", so that the JSON Lines output can be
/// fed back with --rewrites.
void add_rewrites(nlohmann::ordered_json& line, const std::vector<RewriteMode>& modes,
                  const std::map<std::string, QueryRewrites>& rewrites, const std::string& qid) {
    const auto it = rewrites.find(qid);
    nlohmann::ordered_json used = nlohmann::ordered_json::object(), errors = nlohmann::ordered_json::object();
    for (const RewriteMode& mode : modes) {
        const bool hyde = mode.tag == "hyde";
        std::vector<std::string> list;
        if (it != rewrites.end()) {
            const auto& all = hyde ? it->second.hyde : it->second.expand;
            list.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(mode.n, all.size())));
            const std::string& error = hyde ? it->second.hyde_error : it->second.expand_error;
            if (!error.empty()) errors[mode.tag] = error;
        }
        used[mode.tag] = list;
    }
    line["rewrites"] = used;
    for (const RewriteMode& mode : modes)
        if (mode.tag == "expand") line["expand_mode"] = mode.append ? "single" : "multi";
    line["fuse_original"] = !modes.empty() && modes.front().include_original;
    if (!errors.empty()) line["rewrite_errors"] = errors;
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

/// Every ranking's tag: each method, then each method with each rewrite mode ("dense+hyde").
std::vector<std::string> ranking_tags(const std::vector<std::string>& methods, const std::vector<RewriteMode>& modes) {
    std::vector<std::string> tags = methods;
    for (const RewriteMode& mode : modes)
        for (const auto& m : methods) tags.push_back(m + "+" + mode.tag);
    return tags;
}

/// One ranking as the JSON Lines output lists it: {"id", "row", "rank", "score", "title"} each.
nlohmann::ordered_json ranking_json(const Ranking& r, const Corpus& corpus) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t j = 0; j < r.size(); ++j) {
        const auto row = static_cast<std::size_t>(r.rows[j]);
        auto [id, title] = corpus.id_and_title(row);
        list.push_back({{"id", id}, {"row", row}, {"rank", j + 1}, {"score", r.scores[j]}, {"title", title}});
    }
    return list;
}

/// Notes on queries that found nothing or fewer than k, and the LLM's failures and usage.
void report_retrieval(std::size_t n_empty, std::size_t n_short, const RetrieveArgs& args, LlmRewriting* llm) {
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
    if (!args.queries.quiet) llm->print_usage();
}

int run_retrieve(const RetrieveArgs& args) {
    for (const auto& [flag, out] : {std::pair{"--out", args.out}, std::pair{"--jsonl", args.jsonl}})
        refuse_output_over_inputs(flag, out, {args.queries.path, args.queries.vectors, args.rewrites});
    const std::vector<std::string> methods = parse_methods(args.methods);
    const std::vector<RewriteMode> modes = rewrite_modes(args);
    if (args.out.empty() && args.jsonl.empty()) throw UsageError("give --out FILE (and/or --jsonl FILE)");
    const Corpus corpus = Corpus::open(args.corpus);
    Retrieval retrieval(corpus, args, methods, !modes.empty());
    const QueryInput input =
        retrieval.need_dense() ? load_queries(corpus, args.queries, "queries") : load_text_queries(corpus, args.queries);
    const std::size_t n = input.records.size();
    const bool from_npy = ends_with(args.queries.path, ".npy");
    std::vector<std::string> texts(n);
    const bool need_text = methods != std::vector<std::string>{"dense"} || !modes.empty();
    if (need_text) {
        if (from_npy) throw UsageError("BM25, hybrid and rewrites need query text; a .npy query file has none");
        for (std::size_t i = 0; i < n; ++i) texts[i] = query_text(corpus, input.records[i], args.queries.path);
    }
    const std::map<std::string, QueryRewrites> file_rewrites =
        args.rewrites.empty() ? std::map<std::string, QueryRewrites>{} : read_rewrites_file(args.rewrites);
    std::unique_ptr<LlmRewriting> llm;
    std::vector<std::string> ids;
    if (!args.llm.url.empty()) {
        llm = std::make_unique<LlmRewriting>(args.llm, corpus.dir(), args.expand, args.hyde, args.expand_mode == "single");
        for (const QueryRecord& r : input.records) ids.push_back(r.id);
    }

    const std::vector<std::string> tags = ranking_tags(methods, modes);

    std::unique_ptr<AtomicFile> trec, jsonl;
    const std::string jsonl_path = !args.jsonl.empty() ? args.jsonl : (ends_with(args.out, ".jsonl") ? args.out : "");
    const std::string trec_path = ends_with(args.out, ".jsonl") ? "" : args.out;
    if (!trec_path.empty()) trec = std::make_unique<AtomicFile>(trec_path);
    if (!jsonl_path.empty()) jsonl = std::make_unique<AtomicFile>(jsonl_path);
    host::ProgressBar bar("retrieve", "queries", args.queries.quiet);
    std::size_t n_empty = 0, n_short = 0;
    for (std::size_t begin = 0; begin < n; begin += queries_per_batch) {
        const std::size_t end = std::min(n, begin + queries_per_batch);
        std::map<std::string, QueryRewrites> llm_rewrites;
        if (llm) llm_rewrites = llm->rewrite(ids, texts, begin, end, args.queries.quiet);
        const std::map<std::string, QueryRewrites>& rewrites = llm ? llm_rewrites : file_rewrites;
        const auto ranked = retrieval.rank(input, begin, end, texts, rewrites, modes);
        std::string trec_text, jsonl_text;
        for (std::size_t i = begin; i < end; ++i) {
            const auto& by_tag = ranked[i - begin];
            const std::string& qid = input.records[i].id;
            nlohmann::ordered_json results = nlohmann::ordered_json::object();
            bool any_short = false, all_empty = true;
            for (const auto& tag : tags) {
                const Ranking& r = by_tag.at(tag);
                any_short = any_short || r.size() < args.k;
                all_empty = all_empty && r.size() == 0;
                if (trec) trec_text += trec_lines(qid, tag, r, corpus);
                if (jsonl) results[tag] = ranking_json(r, corpus);
            }
            n_empty += all_empty;
            n_short += any_short;
            if (jsonl) {
                nlohmann::ordered_json line;
                line["query"] = qid;
                line["cutoff"] = input.scopes[i].cutoff.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(input.scopes[i].cutoff);
                line["searchable"] = input.scopes[i].row_limit;
                line["results"] = results;
                if (!modes.empty()) add_rewrites(line, modes, rewrites, qid);
                jsonl_text += line.dump() + "\n";
            }
        }
        if (trec) trec->write(trec_text.data(), trec_text.size());
        if (jsonl) jsonl->write(jsonl_text.data(), jsonl_text.size());
        bar.update(end, n);
    }
    if (trec) trec->commit();
    if (jsonl) jsonl->commit();
    bar.finish();
    report_retrieval(n_empty, n_short, args, llm.get());
    if (trec) std::fprintf(stderr, "novelty: wrote the run of %s (%zu rankings) to %s\n", count_of(n, "query").c_str(), tags.size(), trec_path.c_str());
    if (jsonl) std::fprintf(stderr, "novelty: wrote %s to %s\n", count_of(n, "result").c_str(), jsonl_path.c_str());
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
