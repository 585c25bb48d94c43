// Filter values given as text: the lists, floors and files of the metadata filter flags, checked
// once here for every edge (the CLI's flags, and whoever reads the same values).
#include "novelty/corpus/paper_filter.hpp"

#include "io/json/json_parse.hpp"
#include "io/text_lines.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "util/message_text.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace novelty {

namespace {

std::string trimmed(const std::string& text) {
    const std::size_t first = text.find_first_not_of(" \t\r"), last = text.find_last_not_of(" \t\r");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

// Each non-blank line of `path` (trimmed, a byte-order mark dropped) with its number.
template <typename Each>
void each_line(const std::string& path, Each each) {
    LineReader reader(path);
    std::string line;
    while (reader.next(line)) {
        if (reader.line_number() == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
        const std::string text = trimmed(line);
        if (!text.empty()) each(text, reader.line_number());
    }
}

}  // namespace

std::vector<std::string> filter_names(const std::string& list, const std::string& parameter) {
    std::vector<std::string> names;
    std::size_t from = 0;
    for (;;) {
        const std::size_t comma = list.find(',', from);
        const std::string name = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (trimmed(name).empty())
            throw UsageError(list.empty() ? std::string("an empty value names no ") + parameter
                                          : quote_value(list) + " holds an empty name (names are separated by single "
                                                                "commas; a name that holds a comma goes in a file)",
                             parameter);
        names.push_back(name);
        if (comma == std::string::npos) return names;
        from = comma + 1;
    }
}

std::int64_t parse_min_citations(const std::string& text, const std::string& parameter) {
    const auto refuse = [&] {
        throw UsageError(quote_value(text) + " is not a whole number from 0 to " +
                             std::to_string(std::numeric_limits<std::int64_t>::max()),
                         parameter);
    };
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) refuse();
    std::uint64_t value = 0;
    for (const char c : text) {
        const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
        if (value > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10) refuse();
        value = value * 10 + digit;
    }
    return static_cast<std::int64_t>(value);
}

std::vector<std::string> read_name_file(const std::string& path) {
    std::vector<std::string> names;
    each_line(path, [&](const std::string& text, std::size_t) { names.push_back(text); });
    if (names.empty()) throw InputError(path, 0, "names nothing (one name per line)");
    return names;
}

std::vector<std::string> read_paper_list(const std::string& path) {
    std::vector<std::string> ids;
    each_line(path, [&](const std::string& text, std::size_t line) {
        if (text[0] != '{') {
            ids.push_back(text);
            return;
        }
        // A JSON Lines record (a file of papers or ideas): its "id".
        nlohmann::json record;
        try {
            record = parse_json(text);
        } catch (const std::exception& e) {
            throw InputError(path, line, std::string("starts like a JSON object but does not parse: ") + e.what());
        }
        const auto id = record.is_object() ? record.find("id") : record.end();
        if (!record.is_object() || id == record.end() || !(id->is_string() || id->is_number_integer()) ||
            (id->is_string() && trimmed(id->get<std::string>()).empty()))
            throw InputError(path, line, "a JSON line names its paper as \"id\" (a string or an integer); this one has none");
        ids.push_back(id->is_string() ? trimmed(id->get<std::string>()) : id->dump());
    });
    if (ids.empty()) throw InputError(path, 0, "names no paper");
    return ids;
}

UnknownPapers unknown_papers(const Corpus& corpus, const std::vector<std::string>& ids, std::size_t max_listed) {
    UnknownPapers out;
    for (const auto& id : ids) {
        if (corpus.find_row(id)) continue;
        ++out.count;
        if (out.first.size() < max_listed) out.first.push_back(id);
    }
    return out;
}

}  // namespace novelty
