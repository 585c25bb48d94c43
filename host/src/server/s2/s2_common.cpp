#include "server/s2/s2_common.hpp"

#include "server/s2/s2_error.hpp"

#include <algorithm>
#include <cctype>

namespace novelty::host::s2 {

std::string required_query(const Params& params) {
    const auto q = param(params, "query");
    if (!q || std::all_of(q->begin(), q->end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        throw S2Error(400, "Missing required parameter: query");
    return *q;
}

nlohmann::ordered_json papers_json(S2Corpus& corpus, const std::vector<std::int64_t>& rows, const FieldSelection& fields) {
    const PaperContext context = context_of(corpus);
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Paper& p : corpus.engine().papers(rows)) out.push_back(paper_json(p, fields, context));
    return out;
}

Page page_of(const Params& params, std::size_t fallback, std::size_t max_limit, std::size_t max_offset) {
    Page p;
    p.offset = count_param(params, "offset", 0, 0, max_offset);
    p.limit = count_param(params, "limit", fallback, 1, max_limit);
    return p;
}

nlohmann::ordered_json paged(std::size_t total, const Page& page, bool with_total,
                             const std::function<nlohmann::ordered_json(std::size_t begin, std::size_t end)>& items) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (with_total) out["total"] = total;
    out["offset"] = page.offset;
    const std::size_t begin = std::min(page.offset, total), end = std::min(total, page.offset + page.limit);
    if (end < total) out["next"] = end;
    out["data"] = begin < end ? items(begin, end) : nlohmann::ordered_json::array();
    return out;
}

DateRange dates_of(const Params& params) {
    DateRange dates;
    if (const auto y = param(params, "year")) dates = year_range(*y);
    if (const auto d = param(params, "publicationDateOrYear")) dates = intersect(dates, date_range(*d));
    return dates;
}

bool in_range(const std::string& sort_date, const DateRange& range) {
    if (!range.from && !range.through) return true;
    if (sort_date.empty()) return false;
    if (range.through && sort_date > range.through->effective()) return false;
    if (!range.from) return true;
    const auto before = period_before(*range.from);
    return !before || sort_date > before->effective();
}

std::vector<std::size_t> filtered_rows(S2Corpus& corpus, const std::vector<std::size_t>& rows, const Params& params) {
    const DateRange dates = dates_of(params);
    const PaperFilter meta = metadata_filter(params);
    const RecordFilter records = record_filter(params);
    const S2TextIndex& index = corpus.text_index();
    const auto listed = [](const std::vector<std::string>& names, const std::string& v) {
        return names.empty() || std::find(names.begin(), names.end(), v) != names.end();
    };
    std::vector<std::size_t> kept;
    for (const std::size_t row : rows) {
        const RowMeta& m = index.meta(row);
        if (!in_range(m.sort_date, dates) || !listed(meta.fields, m.field) || !listed(meta.venues, m.venue)) continue;
        if (meta.min_citations && (!m.citations || *m.citations < *meta.min_citations)) continue;
        kept.push_back(row);
    }
    if (!records.active()) return kept;
    std::vector<std::size_t> out;
    for (const Paper& p : corpus.engine().papers(std::vector<std::int64_t>(kept.begin(), kept.end())))
        if (records.allows(p)) out.push_back(p.row);
    return out;
}

RecordFilter record_filter(const Params& params) {
    RecordFilter f;
    if (const auto v = param(params, "publicationTypes")) f.publication_types = comma_items(*v);
    if (const auto v = param(params, "openAccessPdf")) {
        if (!v->empty() && *v != "true") bad_param("openAccessPdf", *v, "give it without a value (or =true)");
        f.open_access_pdf = true;
    }
    return f;
}

bool RecordFilter::allows(const Paper& paper) const {
    if (!active()) return true;
    const nlohmann::json extra = nlohmann::json::parse(paper.extra_json, nullptr, false);
    if (!extra.is_object()) return false;
    const auto key = [&](std::initializer_list<const char*> names) -> const nlohmann::json* {
        for (const char* n : names)
            if (auto it = extra.find(n); it != extra.end() && !it->is_null()) return &*it;
        return nullptr;
    };
    if (!publication_types.empty()) {
        const nlohmann::json* types = key({"publicationTypes", "publicationtypes"});
        if (!types || !types->is_array()) return false;
        const bool any = std::any_of(types->begin(), types->end(), [&](const nlohmann::json& t) {
            return t.is_string() && std::find(publication_types.begin(), publication_types.end(), t.get<std::string>()) !=
                                        publication_types.end();
        });
        if (!any) return false;
    }
    if (open_access_pdf) {
        const nlohmann::json* pdf = key({"openAccessPdf", "openaccesspdf"});
        const nlohmann::json* info = key({"openAccessInfo", "openaccessinfo"});
        const bool has_url = info && info->is_object() && info->contains("url") && (*info)["url"].is_string();
        if (!pdf && !has_url) return false;
    }
    return true;
}

}  // namespace novelty::host::s2
