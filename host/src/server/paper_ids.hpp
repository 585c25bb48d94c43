// The one rule for a paper's ids in other catalogues, used by the Semantic Scholar-compatible
// API (its externalIds field and every {paper_id} of its paths) and by the web page's paper
// links: which external ids a corpus record carries, and which corpus lookups an id of the
// Semantic Scholar forms ("CorpusId:N", "DOI:...", "ARXIV:...", "PMID:N", "PMCID:...",
// "URL:...", a 40-hex paper id) stands for.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace novelty::host {

/// The import format shared by every source of the corpus ("" when they differ or none is
/// recorded): it says what a bare paper id is (s2: a CorpusId; pubmed: a PMID; arxiv: an arXiv id).
std::string corpus_format(const CorpusManifest& manifest);

/// The first of `keys` that `extra` (a record's extra JSON) holds with a non-null value; null
/// when extra is not an object or holds none of them.
const nlohmann::json* find_key(const nlohmann::json& extra, std::initializer_list<const char*> keys);

/// The paper's ids elsewhere, with the Semantic Scholar API's keys ("DOI", "ArXiv", "PubMed",
/// "PubMedCentral", "CorpusId" as a number, any other key of the record's own "externalids" or
/// "externalIds" object). Read, in this order of precedence: that object (null values left out);
/// the record's "doi" (a doi.org URL or "doi:" prefix removed), "pmid", "pmc"/"pmcid",
/// "arxiv_id"/"arxiv"; an id of the forms "doi:X", "arxiv:X", "pmid:N"; an arXiv snapshot record
/// (its keys "versions" and "categories": the id is the arXiv id); and `format`. An empty object
/// when none is known.
nlohmann::ordered_json external_ids(const Paper& paper, const nlohmann::json& extra, const std::string& format);

/// The 40-hex Semantic Scholar paper id a URL of semanticscholar.org/paper/... ends with (lower
/// case), "" when it holds none.
std::string s2_sha_of_url(const std::string& url);

/// What to look up (Corpus::find_row, in order, first found wins) for a paper id as the Semantic
/// Scholar API takes it: the id itself (the corpus's own ids and its aliases such as
/// "corpusid:N", "doi:X", "arxiv:X", "pmid:N" match case-insensitively there); "PMCID:X" as
/// "pmc:X"; "URL:X" as X (an arxiv.org or doi.org URL finds its alias). A 40-hex id, or a URL of
/// semanticscholar.org/paper/..., is not a corpus alias: `s2_sha` is set to it for the caller's
/// own table of those ids. Empty for an empty id.
struct IdLookup {
    std::vector<std::string> keys;
    std::string s2_sha;
};
IdLookup paper_id_lookup(const std::string& id);

}  // namespace novelty::host
