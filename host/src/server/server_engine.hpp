// The server's engine side: the read-only corpus, the backend, the encoder and the three
// batchers (score, search, embed). Each call takes a parsed request body and returns the whole
// reply body; bad requests throw UsageError (400). Thread-safe: corpus lookups and backend calls
// are serialised by one mutex, and each batcher has one worker.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper_filter.hpp"
#include "novelty/request/resolver.hpp"
#include "novelty/request/retrieval_run.hpp"
#include "novelty/request/scope.hpp"
#include "novelty_host/server/server.hpp"
#include "server/server_requests.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host {

/// A retrieval through the request layer's RetrievalRanker (the one `novelty retrieve` and Python
/// use): the records' rankings by tag under the request's cutoff and filter.
struct RetrievalRequest {
    RecordBatch records;  ///< as parse_records gives them (origin key set to `key` by rank)
    RetrievalSettings settings;  ///< methods, k, fusion depth; no rewriting (expand and hyde stay 0)
    std::optional<PartialDate> cutoff;  ///< for records without their own date
    PaperFilter filter;          ///< applied to every record, with its own
    /// Papers published on or before this are left out (a lower date bound; rows are in date
    /// order, so they are a row prefix); nullopt = none.
    std::optional<PartialDate> exclude_through;
    std::string key = "queries";  ///< the records' name in error messages
};

struct RetrievalReply {
    std::vector<RankingsByTag> rankings;  ///< per record, in order
    std::vector<RecordScope> scopes;      ///< per record: row limit, cutoff, exclusions
    std::vector<std::string> tags;        ///< the rankings' tags, in output order
};

class ServerEngine {
public:
    explicit ServerEngine(const ServerOptions& options);
    ~ServerEngine();

    /// {"ideas": [...], "p"?, "q"?, "cutoff"?} -> {"results": [score result per idea, in order]}.
    std::string score(const nlohmann::json& body);
    /// {"queries": [...], "k"?, "cutoff"?} -> {"results": [search result per query, in order]}.
    std::string search(const nlohmann::json& body);
    /// {"records": [...]} -> {"embedder", "dim", "results": [{"id", "vector"}]}.
    std::string embed(const nlohmann::json& body);

    /// {"queries": [...], "methods"?, "k"?, "fusion_depth"?, "cutoff"?, "filter"?} ->
    /// {"results": [retrieval record per query, as `novelty retrieve --jsonl` writes it]}.
    std::string retrieve(const nlohmann::json& body);
    /// The rankings of a retrieval (records embedded by the server's encoder when a method is dense).
    RetrievalReply rank(const RetrievalRequest& request);

    /// Under the engine lock: the papers at `rows`, in the order given.
    std::vector<Paper> papers(const std::vector<std::int64_t>& rows);
    /// Under the engine lock: the row of the paper with this id or alias (Corpus::find_row).
    std::optional<std::size_t> find_row(const std::string& id);
    /// The corpus vector of `row` as float32 (dim values).
    std::vector<float> vector(std::size_t row);
    /// The encoder's name as the manifest records it ("" when none).
    std::string embedder_name() const;

    const Corpus& corpus() const;
    BatchCounts batch_counts() const;
    /// Answers what the batchers hold, then ends their workers.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty::host
