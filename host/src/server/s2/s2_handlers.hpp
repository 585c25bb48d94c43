// The Semantic Scholar Graph API subset served by `novelty serve` (docs/api.md,
// docs/integrations.md): each handler takes the request's query parameters (and body) and
// returns the reply body in that API's shape, or throws S2Error with its status and message.
// Ranking goes through the engine's retrieval (the request layer's RetrievalRanker); paper and
// author objects come from s2_fields; the citation graph and authors from the S2Catalogue.
#pragma once

#include "server/s2/s2_catalogue.hpp"
#include "server/s2/s2_params.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace novelty::host::s2 {

using Reply = nlohmann::ordered_json;

// --- papers (s2_handlers.cpp) ---
/// GET /graph/v1/paper/search -> {"total", "offset", "next"?, "data": [paper]}.
Reply paper_search(S2Corpus& corpus, const Params& params);
/// GET /graph/v1/paper/search/match -> {"data": [paper with "matchScore"]}; 404 "Title match not found".
Reply paper_match(S2Corpus& corpus, const Params& params);
/// GET /graph/v1/paper/{id} -> paper; 404 "Paper with id ID not found".
Reply paper_details(S2Corpus& corpus, const std::string& id, const Params& params);
/// POST /graph/v1/paper/batch {"ids": [...]} -> [paper or null per id, in order].
Reply paper_batch(S2Corpus& corpus, const std::string& body, const Params& params);
/// GET /recommendations/v1/papers/forpaper/{id} -> {"recommendedPapers": [paper]}.
Reply recommendations(S2Corpus& corpus, const std::string& id, const Params& params);
/// POST /recommendations/v1/papers {"positivePaperIds", "negativePaperIds"?} ->
/// {"recommendedPapers": [paper]}: the exact nearest papers to the mean of the positives' vectors
/// minus the mean of the negatives' (each normalised first), the given papers left out.
Reply recommendations_from_lists(S2Corpus& corpus, const std::string& body, const Params& params);

// --- the citation graph and authors (s2_graph_handlers.cpp) ---
/// GET /graph/v1/paper/{id}/citations -> {"offset", "next"?, "data": [{"citingPaper", ...}]}.
Reply paper_citations(S2Corpus& corpus, const std::string& id, const Params& params);
/// GET /graph/v1/paper/{id}/references -> {"offset", "next"?, "data": [{"citedPaper", ...}]}.
Reply paper_references(S2Corpus& corpus, const std::string& id, const Params& params);
/// GET /graph/v1/paper/{id}/authors -> {"offset", "next"?, "data": [author]}.
Reply paper_authors(S2Corpus& corpus, const std::string& id, const Params& params);
/// GET /graph/v1/author/search -> {"total", "offset", "next"?, "data": [author]}.
Reply author_search(S2Corpus& corpus, const Params& params);
/// GET /graph/v1/author/{id} -> author; 404 "Author with id ID not found".
Reply author_details(S2Corpus& corpus, const std::string& id, const Params& params);
/// GET /graph/v1/author/{id}/papers -> {"offset", "next"?, "data": [paper]}.
Reply author_papers(S2Corpus& corpus, const std::string& id, const Params& params);
/// POST /graph/v1/author/batch {"ids": [...]} -> [author or null per id, in order].
Reply author_batch(S2Corpus& corpus, const std::string& body, const Params& params);

// --- text search over the corpus's full-text index (s2_text_handlers.cpp) ---
/// GET /graph/v1/paper/search/bulk -> {"total", "token"?, "data": [paper]}.
Reply paper_bulk_search(S2Corpus& corpus, const Params& params);
/// GET /graph/v1/paper/autocomplete -> {"matches": [{"id", "title", "authorsYear"}]}.
Reply paper_autocomplete(S2Corpus& corpus, const Params& params);
/// GET /graph/v1/snippet/search -> {"data": [{"snippet", "score", "paper"}], "retrievalVersion"}.
Reply snippet_search(S2Corpus& corpus, const Params& params);

/// The corpus row a paper id of the API's forms names (server/paper_ids.hpp's rule); nullopt
/// when none.
std::optional<std::size_t> row_of_id(S2Corpus& corpus, const std::string& id);
/// row_of_id, or S2Error 404 "Paper with id ID not found".
std::size_t row_or_404(S2Corpus& corpus, const std::string& id);

/// How well a title matches a query: 2|common| / (|query terms| + |title terms|) over the
/// distinct lower-cased runs of letters and digits of each, in [0, 1].
double title_match_score(const std::string& query, const std::string& title);

}  // namespace novelty::host::s2
