#include "server/s2/s2_params.hpp"

#include "server/s2/s2_error.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace novelty::host::s2 {

namespace {

std::optional<PartialDate> year_of(const std::string& name, const std::string& value, const std::string& text) {
    if (text.empty()) return std::nullopt;
    if (text.size() != 4 || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        bad_param(name, value, "a year is four digits: 2019, 2016-2020, 2010- or -2015");
    return date_from_year(std::stoll(text));
}

std::optional<PartialDate> date_of(const std::string& name, const std::string& value, const std::string& text) {
    if (text.empty()) return std::nullopt;
    const auto d = parse_date(text);
    if (!d || text.size() > 10) bad_param(name, value, "dates are YYYY, YYYY-MM or YYYY-MM-DD, as in 2019-03-05:2020-06");
    return d;
}

void check_order(const std::string& name, const std::string& value, const DateRange& r) {
    if (r.from && r.through && r.from->effective() > r.through->effective())
        bad_param(name, value, "the range ends before it starts");
}

}  // namespace

std::vector<std::string> comma_items(const std::string& value) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= value.size()) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        std::string item = value.substr(start, comma - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) out.push_back(item);
        start = comma + 1;
    }
    return out;
}

std::optional<std::string> param(const Params& params, const std::string& name) {
    auto [begin, end] = params.equal_range(name);
    if (begin == end) return std::nullopt;
    return std::prev(end)->second;
}

void refuse_unknown(const Params& params, std::initializer_list<const char*> known) {
    for (const auto& [name, value] : params) {
        if (std::find_if(known.begin(), known.end(), [&](const char* k) { return name == k; }) != known.end()) continue;
        std::string list;
        for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        throw S2Error(400, "Unrecognized query params: [" + clip_for_message(name) + "]; this server takes " + list);
    }
}

std::size_t count_param(const Params& params, const std::string& name, std::size_t fallback, std::size_t min,
                        std::size_t max) {
    const auto v = param(params, name);
    if (!v) return fallback;
    const std::string range = "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (v->empty() || v->size() > 9 || !std::all_of(v->begin(), v->end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        bad_param(name, *v, range);
    const std::size_t n = std::stoul(*v);
    if (n < min || n > max) bad_param(name, *v, range);
    return n;
}

DateRange year_range(const std::string& value) {
    const std::size_t dash = value.find('-');
    DateRange r;
    if (dash == std::string::npos) {
        r.from = r.through = year_of("year", value, value);
        if (!r.from) bad_param("year", value, "give a year or a range: 2019, 2016-2020, 2010- or -2015");
    } else {
        r.from = year_of("year", value, value.substr(0, dash));
        r.through = year_of("year", value, value.substr(dash + 1));
        if (!r.from && !r.through) bad_param("year", value, "give a year or a range: 2019, 2016-2020, 2010- or -2015");
    }
    check_order("year", value, r);
    return r;
}

DateRange date_range(const std::string& value) {
    const std::size_t colon = value.find(':');
    DateRange r;
    if (colon == std::string::npos) {
        r.from = r.through = date_of("publicationDateOrYear", value, value);
    } else {
        r.from = date_of("publicationDateOrYear", value, value.substr(0, colon));
        r.through = date_of("publicationDateOrYear", value, value.substr(colon + 1));
    }
    if (!r.from && !r.through)
        bad_param("publicationDateOrYear", value, "give FROM:THROUGH, such as 2019-03-05:2020-06-06, 2019-03: or :2015");
    check_order("publicationDateOrYear", value, r);
    return r;
}

DateRange intersect(const DateRange& a, const DateRange& b) {
    DateRange r = a;
    if (b.from && (!r.from || b.from->effective() > r.from->effective())) r.from = b.from;
    if (b.through && (!r.through || b.through->effective() < r.through->effective())) r.through = b.through;
    return r;
}

std::optional<PartialDate> period_before(const PartialDate& from) {
    if (from.month == 0) return from.year > 1000 ? std::optional(PartialDate{from.year - 1, 0, 0}) : std::nullopt;
    if (from.day > 1) return PartialDate{from.year, from.month, from.day - 1};
    if (from.month > 1) return PartialDate{from.year, from.month - 1, 0};
    return from.year > 1000 ? std::optional(PartialDate{from.year - 1, 12, 0}) : std::nullopt;
}

PaperFilter metadata_filter(const Params& params) {
    PaperFilter f;
    if (const auto v = param(params, "venue")) f.venues = comma_items(*v);
    if (const auto v = param(params, "fieldsOfStudy")) f.fields = comma_items(*v);
    if (param(params, "minCitationCount"))
        f.min_citations = static_cast<std::int64_t>(count_param(params, "minCitationCount", 0, 0, 999999999));
    return f;
}

}  // namespace novelty::host::s2
