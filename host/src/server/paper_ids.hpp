// The one rule for a paper's ids in other catalogues, used by the Semantic Scholar-compatible
// API (its externalIds field and every {paper_id} of its paths) and by the web page's paper
// links: which external ids a corpus record carries, and which corpus lookups an id of the
// Semantic Scholar forms ("CorpusId:N", "DOI:...", "ARXIV:...", "PMID:N", "PMCID:...",
// "URL:...", a 40-hex paper id) stands for.
#pragma once

#include "corpus/external_ids.hpp"
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

// find_key, external_ids, s2_sha_of_url and is_hex40: the engine's one rule (corpus/external_ids.hpp).
using novelty::external_ids;
using novelty::find_key;
using novelty::is_hex40;
using novelty::s2_sha_of_url;

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
