// The "filter" object of an idea or query record: {"field": NAME or [NAMES], "venue": NAME or
// [NAMES], "min_citations": N, "papers": [IDS]}, every key optional.
#pragma once

#include "novelty/corpus/paper_filter.hpp"

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>

namespace novelty {

/// Parses `value`; calls `fail` (which throws) with the problem for anything else: not an
/// object (null too), an unknown key, a name that is not a string or is empty, an empty list of
/// papers, a negative, fractional or too large count.
PaperFilter parse_record_filter(const nlohmann::json& value, const std::function<void(const std::string&)>& fail);

}  // namespace novelty
