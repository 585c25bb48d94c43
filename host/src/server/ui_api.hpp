// The endpoints the web page needs beyond scoring and search (docs/api.md): paper metadata
// (POST /v1/papers), the corpus's own RND distribution (GET /v1/corpus/rnd), and scoring as a
// job with progress (POST /v1/score-job). They go through ServerEngine's request layer, so their
// numbers are the ones /v1/score returns.
#pragma once

#include "server/server_engine.hpp"

#include "novelty/corpus/corpus.hpp"
#include "novelty_host/jobs/job_registry.hpp"
#include "novelty_host/server/server.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace novelty::host::detail {

class UiApi {
public:
    /// `engine` must outlive this object. Opens its own read-only view of the corpus for
    /// metadata lookups (SQLite statements are not shared across threads).
    UiApi(ServerEngine& engine, const ServerOptions& options);

    /// {"ids": [ID, ...], "abstract"?: bool} -> {"results": [paper or {"id", "error"}]}, one per id
    /// in order; a paper is {"id", "row", "title", "date", "year", "venue", "field", "citations",
    /// "link", "abstract"?}, ids resolved as ideas' exclusions are (aliases such as "doi:..."
    /// find their paper; "id" is the corpus's own id).
    std::string papers(const nlohmann::json& body);

    /// {"p"?, "q"?} (from the query string) -> the RND of a fixed sample of corpus papers, each
    /// scored as an idea through /v1/score's path (itself excluded, no cutoff), computed on first
    /// request for each (p, q) and kept for the server's life.
    std::string rnd_distribution(const nlohmann::json& params);

    /// Checks a /v1/score body (400 on a bad one) and returns the work of a job that scores it
    /// in slices, reporting ("score", ideas done, ideas) after each; its result is /v1/score's
    /// reply for the whole body.
    JobRegistry::ProgressWork score_job(const std::string& body);

private:
    std::string compute_distribution(std::size_t p, std::size_t q);

    ServerEngine& engine_;
    ServerOptions options_;
    std::mutex corpus_mutex_;
    Corpus corpus_;
    std::mutex distribution_mutex_;  ///< held while one is computed: concurrent first requests wait
    std::map<std::pair<std::size_t, std::size_t>, std::string> distributions_;
};

/// Papers sampled for the corpus's RND distribution at most.
constexpr std::size_t rnd_sample_size = 500;

/// A paper's web link from its metadata, its ids read by the rule the Semantic Scholar API's
/// externalIds use (paper_ids.hpp, `format` the corpus's import format): its DOI
/// (https://doi.org/...), else its arXiv id, else an http(s) URL among its fields ("url", "pdf",
/// "site", "openalex") or an id that is one, else its PubMed id; "" when none is known. Only
/// http and https links are ever returned.
std::string paper_link(const std::string& id, const std::string& extra_json, const std::string& format = "");

}  // namespace novelty::host::detail
