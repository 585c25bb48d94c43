// The Semantic Scholar Graph API subset served by `novelty serve` (docs/api.md): each handler
// takes the request's query parameters (and body) and returns the reply body in that API's
// shape, or throws S2Error with its status and message. Ranking goes through the engine's
// retrieval (the request layer's RetrievalRanker); paper objects come from s2_fields.
#pragma once

#include "server/s2/s2_params.hpp"
#include "server/server_engine.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace novelty::host::s2 {

/// GET /graph/v1/paper/search -> {"total", "offset", "next"?, "data": [paper]}.
nlohmann::ordered_json paper_search(ServerEngine& engine, const Params& params);
/// GET /graph/v1/paper/search/match -> {"data": [paper with "matchScore"]}; 404 "Title match not found".
nlohmann::ordered_json paper_match(ServerEngine& engine, const Params& params);
/// GET /graph/v1/paper/{id} -> paper; 404 "Paper with id ID not found".
nlohmann::ordered_json paper_details(ServerEngine& engine, const std::string& id, const Params& params);
/// POST /graph/v1/paper/batch {"ids": [...]} -> [paper or null per id, in order].
nlohmann::ordered_json paper_batch(ServerEngine& engine, const std::string& body, const Params& params);
/// GET /recommendations/v1/papers/forpaper/{id} -> {"recommendedPapers": [paper]}.
nlohmann::ordered_json recommendations(ServerEngine& engine, const std::string& id, const Params& params);

/// The corpus row a paper id of the API's forms names: the engine's id or alias as given
/// ("CorpusId:N", "DOI:...", "ARXIV:...", "PMID:N" are aliases already), "PMCID:X" as "pmc:X",
/// "URL:..." as the URL it carries; nullopt when none.
std::optional<std::size_t> row_of_id(ServerEngine& engine, const std::string& id);

/// How well a title matches a query: 2|common| / (|query terms| + |title terms|) over the
/// distinct lower-cased runs of letters and digits of each, in [0, 1].
double title_match_score(const std::string& query, const std::string& title);

}  // namespace novelty::host::s2
