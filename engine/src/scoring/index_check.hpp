// The check every corpus-level operation given a search index makes: that the index was built
// on this corpus's vectors (the same rows at the same address), since its answers name rows.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/search/search.hpp"

#include <string>

namespace novelty {

/// Throws UsageError naming `who` when `index` was not built on corpus.vectors().
inline void require_index_on_corpus(const SearchIndex& index, const Corpus& corpus, const std::string& who) {
    if (index.corpus().data != corpus.vectors().data() || index.n_rows() != corpus.size())
        throw UsageError(who + ": the search index was not built on this corpus's vectors");
}

}  // namespace novelty
