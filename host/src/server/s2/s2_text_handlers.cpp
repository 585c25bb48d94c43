// Bulk search, title autocompletion and snippet search of the Semantic Scholar-compatible API,
// over the corpus's full-text index (s2_text_index.hpp).
#include "server/paper_ids.hpp"
#include "server/s2/s2_common.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_handlers.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

namespace {

using nlohmann::ordered_json;

constexpr std::size_t bulk_page = 1000;
constexpr std::size_t autocomplete_matches = 10;
constexpr std::size_t autocomplete_chars = 100;

/// A bulk search's order: by paperId (the default), publicationDate or citationCount, ascending
/// or descending; papers without a date or count come last either way; ties by paperId.
struct BulkSort {
    std::string field = "paperId";
    bool descending = false;
};

BulkSort sort_of(const Params& params) {
    BulkSort s;
    const auto v = param(params, "sort");
    if (!v) return s;
    const std::size_t colon = v->find(':');
    s.field = v->substr(0, colon);
    const std::string order = colon == std::string::npos ? "asc" : v->substr(colon + 1);
    if (s.field != "paperId" && s.field != "publicationDate" && s.field != "citationCount")
        bad_param("sort", *v, "sort by paperId, publicationDate or citationCount, as in citationCount:desc");
    if (order != "asc" && order != "desc") bad_param("sort", *v, "the order is asc or desc, as in citationCount:desc");
    s.descending = order == "desc";
    return s;
}

void sort_rows(std::vector<std::size_t>& rows, const BulkSort& sort, const S2TextIndex& index) {
    const auto key = [&](std::size_t row) -> std::optional<std::string> {
        const RowMeta& m = index.meta(row);
        if (sort.field == "publicationDate") return m.sort_date.empty() ? std::nullopt : std::optional(m.sort_date);
        return std::nullopt;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
        const RowMeta &ma = index.meta(a), &mb = index.meta(b);
        if (sort.field == "citationCount" && ma.citations != mb.citations) {
            if (!ma.citations || !mb.citations) return ma.citations.has_value();
            return sort.descending ? *ma.citations > *mb.citations : *ma.citations < *mb.citations;
        }
        if (sort.field == "publicationDate") {
            const auto ka = key(a), kb = key(b);
            if (ka != kb) {
                if (!ka || !kb) return ka.has_value();
                return sort.descending ? *ka > *kb : *ka < *kb;
            }
        }
        if (sort.field == "paperId" && sort.descending) return ma.id > mb.id;
        return ma.id < mb.id;
    });
}

std::size_t token_of(const Params& params) {
    const auto t = param(params, "token");
    if (!t) return 0;
    if (t->empty() || t->size() > 12 || !std::all_of(t->begin(), t->end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        bad_param("token", *t, "send back the token of the previous page as it was given");
    return std::stoull(*t);
}

std::string authors_year(const Paper& paper) {
    const std::vector<Author> authors = authors_of(nlohmann::json::parse(paper.extra_json, nullptr, false));
    std::string out;
    if (!authors.empty()) {
        const std::string& name = authors.front().name;
        out = name.substr(name.find_last_of(' ') == std::string::npos ? 0 : name.find_last_of(' ') + 1);
        if (authors.size() > 1) out += " et al.";
    }
    if (paper.year) out += (out.empty() ? "" : ", ") + std::to_string(*paper.year);
    return out;
}

}  // namespace

Reply paper_bulk_search(S2Corpus& corpus, const Params& params) {
    // offset and limit are not parameters of the bulk search, but the client libraries send them
    // (pages here are 1,000 papers, continued with the token): they are taken and have no effect.
    refuse_unknown(params, {"query", "token", "fields", "sort", S2_FILTER_PARAMS, "offset", "limit"});
    page_of(params, 100, 1000, 999999999);
    const BulkQuery query = parse_bulk_query(param(params, "query").value_or(""));
    const FieldSelection fields = parse_fields(param(params, "fields"), "title", FieldScope::paper);
    const BulkSort sort = sort_of(params);
    const std::size_t start = token_of(params);
    std::vector<std::size_t> rows = filtered_rows(corpus, corpus.text_index().matching(query), params);
    sort_rows(rows, sort, corpus.text_index());
    ordered_json out{{"total", rows.size()}};
    const std::size_t begin = std::min(start, rows.size()), end = std::min(rows.size(), begin + bulk_page);
    if (end < rows.size()) out["token"] = std::to_string(end);
    out["data"] = papers_json(corpus, std::vector<std::int64_t>(rows.begin() + begin, rows.begin() + end), fields);
    return out;
}

Reply paper_autocomplete(S2Corpus& corpus, const Params& params) {
    refuse_unknown(params, {"query"});
    std::string query = required_query(params);
    if (query.size() > autocomplete_chars) query.resize(autocomplete_chars);  // the API reads 100 characters
    const std::vector<std::size_t> rows = corpus.text_index().title_prefix(query, autocomplete_matches);
    ordered_json matches = ordered_json::array();
    for (const Paper& p : corpus.engine().papers(std::vector<std::int64_t>(rows.begin(), rows.end())))
        matches.push_back({{"id", p.id}, {"title", p.title}, {"authorsYear", authors_year(p)}});
    return {{"matches", std::move(matches)}};
}

}  // namespace novelty::host::s2
