// A paper's ids in other catalogues, read from its record: the one rule that the citation graph
// (corpus/citations), the Semantic Scholar-compatible API's externalIds and the web page's paper
// links share (host/src/server/paper_ids.hpp re-exports it).
#pragma once

#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>

namespace novelty {

/// The first of `keys` that `extra` (a record's extra JSON) holds with a non-null value; null
/// when extra is not an object or holds none of them.
const nlohmann::json* find_key(const nlohmann::json& extra, std::initializer_list<const char*> keys);

/// The paper's ids elsewhere, with the Semantic Scholar API's keys ("DOI", "ArXiv", "PubMed",
/// "PubMedCentral", "CorpusId" as a number, any other key of the record's own "externalids" or
/// "externalIds" object). Read, in this order of precedence: that object (null values left out);
/// the record's "doi" (a doi.org URL or "doi:" prefix removed), "pmid", "pmc"/"pmcid",
/// "arxiv_id"/"arxiv"; an id of the forms "doi:X", "arxiv:X", "pmid:N"; an arXiv snapshot record
/// (its keys "versions" and "categories": the id is the arXiv id); and `format` (the import
/// format every source of the corpus shares, "" when they differ: s2 makes a bare id a CorpusId,
/// pubmed a PMID, arxiv an arXiv id). An empty object when none is known.
nlohmann::ordered_json external_ids(const Paper& paper, const nlohmann::json& extra, const std::string& format);

/// The 40-hex Semantic Scholar paper id a URL of semanticscholar.org/paper/... ends with (lower
/// case), "" when it holds none.
std::string s2_sha_of_url(const std::string& url);

/// True for a string of 40 hexadecimal digits (a Semantic Scholar paper id).
bool is_hex40(const std::string& s);

}  // namespace novelty
