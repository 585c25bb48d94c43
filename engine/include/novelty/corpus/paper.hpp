// One paper of a corpus, as stored in papers.sqlite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

struct Paper {
    std::size_t row = 0;          ///< row in the corpus (= row of vectors.npy); set by the store
    std::string id;               ///< unique within the corpus
    std::string title;
    std::string abstract;
    std::string date;             ///< as precise as known: "YYYY", "YYYY-MM" or "YYYY-MM-DD"; "" if unknown
    std::string sort_date;        ///< the last day the date allows, "YYYY-MM-DD"; "" if unknown
    std::optional<int> year;
    std::string field;            ///< research field, "" if unknown
    std::string venue;            ///< "" if unknown
    std::optional<std::int64_t> citations;  ///< citation count, when known
    std::string extra_json = "{}";  ///< the record's other fields, as a JSON object
    /// Other names of the paper that ideas and exclusions may use instead of its id (a DOI,
    /// "doi:DOI", "arxiv:ID", "pmid:N", ...; docs/formats.md lists them per format). Stored in
    /// papers.sqlite's aliases table and resolved by Corpus::find_row.
    std::vector<std::string> aliases;
};

}  // namespace novelty
