// Helpers the Semantic Scholar-compatible handlers share: required parameters, paper lists
// in the API's shape, paging, and the record filters the retrieval cannot apply itself.
#pragma once

#include "server/s2/s2_fields.hpp"
#include "server/s2/s2_params.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

/// The filters every paper search takes (the client libraries send them all), for refuse_unknown.
#define S2_FILTER_PARAMS "year", "publicationDateOrYear", "venue", "fieldsOfStudy", "minCitationCount", \
                         "publicationTypes", "openAccessPdf"

namespace novelty::host::s2 {

/// The non-blank `query` parameter; S2Error 400 "Missing required parameter: query" otherwise.
std::string required_query(const Params& params);

/// The paper objects of `rows`, in order.
nlohmann::ordered_json papers_json(S2Corpus& corpus, const std::vector<std::int64_t>& rows, const FieldSelection& fields);

/// `offset` (0 to `max_offset`) and `limit` (1 to `max_limit`, default `fallback`) of a paged list.
struct Page {
    std::size_t offset = 0;
    std::size_t limit = 0;
};
Page page_of(const Params& params, std::size_t fallback, std::size_t max_limit, std::size_t max_offset);

/// {"offset", "next"? (when more follow), "data": items[offset, offset + limit)} built by `item`
/// for each index; with "total" first when `with_total`.
nlohmann::ordered_json paged(std::size_t total, const Page& page, bool with_total,
                             const std::function<nlohmann::ordered_json(std::size_t begin, std::size_t end)>& items);

/// The `publicationTypes` (comma-separated; a paper matches with any one) and `openAccessPdf`
/// (present: the paper has an open-access PDF) filters, read from the records; both absent
/// passes every paper.
struct RecordFilter {
    std::vector<std::string> publication_types;
    bool open_access_pdf = false;
    bool active() const { return open_access_pdf || !publication_types.empty(); }
    bool allows(const Paper& paper) const;
};
RecordFilter record_filter(const Params& params);

/// The range of `year` and `publicationDateOrYear` together (either, both or neither given).
DateRange dates_of(const Params& params);
/// Whether a paper's sort date ("YYYY-MM-DD", the last day its date allows; "" for undated)
/// falls in `range`, as the relevance search counts it: undated papers are in no range that has
/// a bound, and a range from a period starts on that period's first day.
bool in_range(const std::string& sort_date, const DateRange& range);

/// The rows among `rows` (in their order) that pass the dates (`year`, `publicationDateOrYear`),
/// metadata (`venue`, `fieldsOfStudy`, `minCitationCount`) and record (`publicationTypes`,
/// `openAccessPdf`) filters of `params`, as the relevance search applies them.
std::vector<std::size_t> filtered_rows(S2Corpus& corpus, const std::vector<std::size_t>& rows, const Params& params);


}  // namespace novelty::host::s2
