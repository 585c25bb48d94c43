// How the citation graph (citation_table.hpp) names papers: the lookup keys of a cited work as a
// record's reference list gives it ("doi:10.1/x", "openalex:w12", "corpusid:7", "pmid:5",
// "arxiv:2101.00001", "pmc:pmc9", "sha:<40 hex>") and every key under which a corpus paper can be
// cited (its id, its external ids, its OpenAlex work id, the 40-hex id of its S2 URL). A
// reference resolves to the paper that holds its key.
#pragma once

#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace novelty::citations_detail {

/// A cited work: its lookup key, and the id it was given with under the key the Semantic Scholar
/// API's externalIds use for it ("DOI", "OpenAlex", "CorpusId", "PubMed", "PubMedCentral",
/// "ArXiv"; "" with id "" for a 40-hex S2 id, which names nothing outside the corpus). An empty
/// key: the reference names nothing this reading knows (it is left out).
struct CitedKey {
    std::string key;
    std::string id_kind;
    std::string id;
};

/// A reference given as text: "https://openalex.org/W1" or "W1", a bare number or "CorpusId:N"
/// (a Semantic Scholar corpus id), "DOI:x", a DOI ("10.x/..."), a doi.org or arxiv.org URL,
/// "arxiv:x", "PMID:N", "PMCID:x", a 40-hex S2 paper id; anything else as its normalised alias.
CitedKey cited_key_of_text(const std::string& given);

/// The references a record's extra JSON lists, in its order: "referenced_works" (OpenAlex),
/// else "references" (PubMed's "PMID:N" / "DOI:x" / "PMCID:x", the S2 API's objects with
/// "corpusId", "paperId" or "doi", or plain ids and numbers). Unreadable entries are left out.
std::vector<CitedKey> references_of(const nlohmann::json& extra);

/// Every key under which `paper` is cited (duplicates removed): its id as a normalised alias, its
/// external ids (corpus/external_ids.hpp, with `format`) as "doi:", "arxiv:", "pmid:", "pmc:",
/// "corpusid:" keys, its OpenAlex work ("openalex:w1", from the id or the record's "openalex"),
/// and "sha:<hex>" for the 40-hex id of an S2 URL in the record's "url".
std::vector<std::string> keys_of_paper(const Paper& paper, const nlohmann::json& extra, const std::string& format);

/// The import format every source shares ("" when they differ or none is given).
std::string shared_format(const std::vector<std::string>& formats);

}  // namespace novelty::citations_detail
