// The result objects of docs/formats.md as JSON text, written one way for the command line
// (JSON Lines) and the HTTP server (the "results" array). The keys are a contract.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace novelty {

/// What every score result of one run shares: its provenance and which scores to list.
struct ScoreReportContext {
    std::string corpus_identity;  ///< Corpus::identity()
    std::string embedder;         ///< the corpus's recorded embedder name, "" when none
    /// The precision the corpus's vectors were embedded at (EmbedderInfo::precision: "f32",
    /// "bf16", "int8", "mixed"); "" leaves the key "embedder_precision" out.
    std::string embedder_precision;
    /// The precision the ideas' texts were embedded at by the built-in encoder in this run ("f32",
    /// "bf16", "int8"; ResolvedBatch::embedded_precision), which may differ from the corpus's;
    /// "" (no idea embedded here, or by a server) leaves the key "ideas_embedder_precision" out.
    std::string ideas_precision;
    std::size_t p = 100;
    std::size_t q = 50;
    bool include_self = false;
    std::string split;            ///< the split date as given, "" when none (null in JSON)
    /// The first date of HD's historical window with a split ("" = none); in the provenance
    /// as "historical_from" only when there is a split.
    std::string historical_from;
    std::size_t evidence = 10;    ///< nearest papers listed per idea (fewer when fewer were found)
    /// Keys under "scores", any of rnd, hd, on, density, density_p, rnd_euclid, rel_hd, rnd_hd;
    /// empty = the first four.
    std::set<std::string> methods;
    /// The search backend that found the neighbours ("cpu", "cuda-f16", ...); "" leaves the
    /// key out.
    std::string backend;
};

/// One idea's score result, compact (no newline):
/// {"id", "scores": {"rnd","hd","on","density","density_p"?,"rnd_euclid"?,"rel_hd"?,"rnd_hd"?}, "nd", "neighbors": [{"id","row","sim","title","nd"?}],
///  "provenance": {"corpus","embedder","p","q","cutoff","excluded","include_self","split","searchable",
///  "embedder_precision"?, "ideas_embedder_precision"?, "historical_from"? (with a split), "backend"?}}.
/// Neighbours nearest first; "nd" on the first p of them. A non-finite HD and a missing ON are null;
/// `cutoff` "" is null. `excluded` lists the ids left out, in the order given.
std::string score_result_json(const Corpus& corpus, const ScoreReportContext& context, const std::string& id,
                              const IdeaScore& score, const std::string& cutoff,
                              const std::vector<std::string>& excluded);

/// Query `query` (an index into `top`) of a search, compact (no newline):
/// {"query": ID, "neighbors": [{"id","row","sim","title"}], "cutoff": DATE|null, "searchable": N}.
/// Neighbours by similarity descending (as in TopK), at most `k` of them (0 = all found);
/// `cutoff` "" is null; `searchable` is the query's row prefix before exclusions. Looks up the
/// labels of all of `top`'s rows: for many lines of one result, use Corpus::labels once and
/// append_search_result_json.
std::string search_result_json(const Corpus& corpus, const std::string& query_id, const TopK& top, std::size_t query,
                               const std::string& cutoff, std::size_t searchable, std::size_t k = 0);

/// The same line (and the same bytes), appended to `out`, with ids and titles taken from
/// `labels` (Corpus::labels over exactly `top.rows`, so that each label is found by its
/// position; other labels are a UsageError): no database lookup per neighbour, and safe to call
/// from several threads at once.
void append_search_result_json(std::string& out, const PaperLabels& labels, const std::string& query_id,
                               const TopK& top, std::size_t query, const std::string& cutoff, std::size_t searchable,
                               std::size_t k = 0);

/// Lines 0..n-1 joined in order, each followed by '\n': line(i, out) appends line i to `out`.
/// Blocks of lines are formatted on all cores (`threads`, 0 = all), so line() must be safe to
/// call concurrently.
std::string format_lines(std::size_t n, const std::function<void(std::size_t i, std::string& out)>& line,
                         std::size_t threads = 0);

}  // namespace novelty
