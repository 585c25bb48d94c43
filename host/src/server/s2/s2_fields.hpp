// The paper fields of the Semantic Scholar-compatible API: which names a `fields` parameter may
// hold, and the paper object answered for a corpus paper (docs/api.md says how each is filled).
#pragma once

#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host::s2 {

/// The requested fields, in the order first named, each once; "paperId" is always answered and
/// not listed. Sub-fields "authors.name" and "authors.authorId" count as "authors";
/// "embedding.MODEL" as "embedding" when MODEL is the corpus's encoder. An empty or absent
/// parameter gives `defaults`. Throws S2Error 400 "Unrecognized or unsupported fields: [a, b]"
/// naming every name outside the supported set.
std::vector<std::string> parse_fields(const std::optional<std::string>& param, const std::vector<std::string>& defaults,
                                      const std::string& embedder);

/// What the paper objects need besides the paper: the corpus's import format when all its sources
/// share one ("" otherwise), its encoder's name, and the vector of a row (for "embedding").
struct PaperContext {
    std::string format;
    std::string embedder;
    std::function<std::vector<float>(std::size_t row)> vector;
};

/// The paper object: "paperId" first, then each field of `fields` in order; a field the paper's
/// record does not hold is null ("authors" is [] then, as the API answers for no authors).
nlohmann::ordered_json paper_json(const Paper& paper, const std::vector<std::string>& fields,
                                  const PaperContext& context);

}  // namespace novelty::host::s2
