#include "request/json/record_filter.hpp"

#include "io/jsonl.hpp"
#include "util/message_text.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace novelty {

namespace {

/// A name or a list of names.
std::vector<std::string> names_of(const nlohmann::json& value, const std::string& key,
                                  const std::function<void(const std::string&)>& fail) {
    if (value.is_string()) {
        if (value.get_ref<const std::string&>().find_first_not_of(" \t") == std::string::npos)
            fail("'filter." + key + "' is an empty name, which no paper has: name one, or leave it out");
        return {value.get<std::string>()};
    }
    if (!value.is_array()) fail("'filter." + key + "' must be a string or an array of strings, found " + json_type_words(value));
    std::vector<std::string> names;
    for (const auto& e : value) {
        if (!e.is_string()) fail("'filter." + key + "' must hold strings, found " + json_type_words(e));
        names.push_back(e.get<std::string>());
        if (names.back().find_first_not_of(" \t") == std::string::npos)
            fail("'filter." + key + "' holds an empty name, which no paper has");
    }
    if (names.empty()) fail("'filter." + key + "' is empty: name at least one, or leave it out");
    return names;
}

}  // namespace

PaperFilter parse_record_filter(const nlohmann::json& value, const std::function<void(const std::string&)>& fail) {
    if (value.is_null())
        fail("'filter' is null: give an object such as {\"field\": \"cs.LG\"}, or leave the key out");
    if (!value.is_object()) fail("'filter' must be an object, found " + json_type_words(value));
    PaperFilter filter;
    for (const auto& [key, v] : value.items()) {
        if (key == "field") {
            filter.fields = names_of(v, key, fail);
        } else if (key == "venue") {
            filter.venues = names_of(v, key, fail);
        } else if (key == "min_citations") {
            if (!v.is_number_integer() && !v.is_number_unsigned())
                fail("'filter.min_citations' must be a whole number, found " + json_type_words(v));
            if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
                fail("'filter.min_citations' is beyond 2^63 - 1");
            if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) fail("'filter.min_citations' is negative");
            filter.min_citations = v.get<std::int64_t>();
        } else if (key == "papers") {
            if (!v.is_array()) fail("'filter.papers' must be an array of paper ids, found " + json_type_words(v));
            filter.papers.emplace();
            for (const auto& e : v) {
                if (e.is_string()) filter.papers->push_back(e.get<std::string>());
                else if (e.is_number_integer()) filter.papers->push_back(e.dump());
                else fail("'filter.papers' must hold paper ids (strings), found " + json_type_words(e));
            }
            if (filter.papers->empty()) fail("'filter.papers' is empty, which allows no paper: name at least one, or leave it out");
        } else {
            fail("'filter' has an unknown key " + quote_value(key) + " (expected field, venue, min_citations, papers)");
        }
    }
    return filter;
}

}  // namespace novelty
