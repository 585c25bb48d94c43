// Reading TREC qrels and run files, with errors that name the file and line.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval_metrics.hpp"
#include "io/text_lines.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace novelty {

namespace {

/// The whitespace-separated fields of a line; empty for a blank or '#' comment line.
std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; in >> field;) fields.push_back(field);
    if (!fields.empty() && fields[0][0] == '#') fields.clear();
    return fields;
}

bool parse_int(const std::string& text, int& value) {
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end;
}

bool parse_double(const std::string& text, double& value) {
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
}

}  // namespace

Qrels read_qrels(const std::string& path) {
    Qrels qrels;
    std::map<std::pair<std::string, std::string>, std::size_t> first_line;
    LineReader reader(path);
    std::string line;
    while (reader.next(line)) {
        const std::size_t n = reader.line_number();
        const auto fields = fields_of(line);
        if (fields.empty()) continue;
        if (fields.size() != 4)
            throw InputError(path, n, "expected 4 columns (qid iter docid rel), found " + std::to_string(fields.size()));
        int grade = 0;
        if (!parse_int(fields[3], grade))
            throw InputError(path, n, "relevance '" + fields[3] + "' is not an integer");
        const auto [it, fresh] = first_line.emplace(std::make_pair(fields[0], fields[2]), n);
        if (!fresh)
            throw InputError(path, n, "document '" + fields[2] + "' is judged twice for query '" + fields[0] +
                                          "' (first on line " + std::to_string(it->second) + ")");
        qrels[fields[0]][fields[2]] = grade;
    }
    if (qrels.empty()) throw InputError(path, 0, "holds no judgements");
    return qrels;
}

RunFile read_run(const std::string& path) {
    RunFile run;
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> first_line;
    LineReader reader(path);
    std::string line;
    while (reader.next(line)) {
        const std::size_t n = reader.line_number();
        const auto fields = fields_of(line);
        if (fields.empty()) continue;
        if (fields.size() != 6)
            throw InputError(path, n,
                             "expected 6 columns (qid Q0 docid rank score tag), found " + std::to_string(fields.size()));
        double score = 0;
        if (!parse_double(fields[4], score))
            throw InputError(path, n, "score '" + fields[4] + "' is not a finite number");
        const auto [it, fresh] = first_line.emplace(std::make_tuple(fields[5], fields[0], fields[2]), n);
        if (!fresh)
            throw InputError(path, n, "document '" + fields[2] + "' is listed twice for query '" + fields[0] +
                                          "' and tag '" + fields[5] + "' (first on line " + std::to_string(it->second) +
                                          ")");
        run[fields[5]][fields[0]].push_back(RunEntry{fields[2], score});
    }
    if (run.empty()) throw InputError(path, 0, "holds no results");
    return run;
}

}  // namespace novelty
