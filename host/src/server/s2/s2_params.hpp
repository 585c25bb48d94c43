// Query parameters of the Semantic Scholar-compatible routes: counts with the API's limits, its
// year and publication-date ranges, and its metadata filters. Every problem throws S2Error 400
// naming the parameter and its value.
#pragma once

#include "novelty/corpus/paper_filter.hpp"
#include "novelty/util/dates.hpp"

#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host::s2 {

/// The request's query parameters (cpp-httplib's Params).
using Params = std::multimap<std::string, std::string>;

/// A comma-separated value's trimmed, non-empty items, in order.
std::vector<std::string> comma_items(const std::string& value);

/// The parameter's value (its last one when repeated); nullopt when absent.
std::optional<std::string> param(const Params& params, const std::string& name);

/// Refuses a parameter that is not in `known` (400 "Unrecognized query params: [name]"): an
/// option this server cannot honour is never silently left out.
void refuse_unknown(const Params& params, std::initializer_list<const char*> known);

/// A non-negative integer parameter in [min, max]; `fallback` when absent.
std::size_t count_param(const Params& params, const std::string& name, std::size_t fallback, std::size_t min,
                        std::size_t max);

/// Papers published in [from, through], both inclusive, either open; dates compare by their
/// effective day (a partial date counts as the last day of its period, as every cutoff does).
struct DateRange {
    std::optional<PartialDate> from;
    std::optional<PartialDate> through;
};

/// `year`: "2019", "2016-2020", "2010-" or "-2015".
DateRange year_range(const std::string& value);
/// `publicationDateOrYear`: "FROM:THROUGH", either side YYYY, YYYY-MM or YYYY-MM-DD or empty
/// ("2019-03-05:2020-06-06", "2019-03:", ":2015-01"; one date without a colon is that period).
DateRange date_range(const std::string& value);
/// Both ranges at once: the later start and the earlier end.
DateRange intersect(const DateRange& a, const DateRange& b);
/// The end of the period just before `from` begins ("2016" -> "2015", "2016-03" -> "2016-02",
/// "2016-03-01" -> "2016-02", "2016-03-05" -> "2016-03-04"); nullopt before year 1000.
std::optional<PartialDate> period_before(const PartialDate& from);

/// `venue` (comma-separated venue names), `fieldsOfStudy` (comma-separated field names, matched
/// against the corpus's field column) and `minCitationCount` as a metadata filter.
PaperFilter metadata_filter(const Params& params);

}  // namespace novelty::host::s2
