// GET /graph/v1/snippet/search: passages of titles and abstracts, BM25 ranked, over the corpus's
// full-text index (the corpus holds no body text, so no passage is from one).
#include "server/paper_ids.hpp"
#include "server/s2/s2_common.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_handlers.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace novelty::host::s2 {

namespace {

using nlohmann::ordered_json;

constexpr std::size_t passage_tokens = 64;

/// The snippet fields the API documents (every one is answered whichever are named).
const std::vector<std::string> snippet_fields{
    "snippet", "snippet.text", "snippet.snippetKind", "snippet.section", "snippet.snippetOffset",
    "snippet.annotations", "snippet.annotations.sentences", "snippet.annotations.refMentions", "score", "paper",
    "paper.corpusId", "paper.title", "paper.authors", "paper.openAccessInfo"};

void check_snippet_fields(const Params& params) {
    const auto v = param(params, "fields");
    if (!v) return;
    std::string unknown;
    for (const std::string& name : comma_items(*v))
        if (std::find(snippet_fields.begin(), snippet_fields.end(), name) == snippet_fields.end())
            unknown += (unknown.empty() ? "" : ", ") + name;
    if (!unknown.empty()) throw S2Error(400, "Unrecognized or unsupported fields: [" + unknown + "]");
}

/// UTF-8 code points in s[0, bytes).
std::size_t code_points(const std::string& s, std::size_t bytes) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < bytes && i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++n;
    return n;
}

/// Whether one of the paper's authors has every word of one of `names`.
bool by_any_of(const std::vector<Author>& authors, const std::vector<std::string>& names) {
    for (const std::string& name : names) {
        const std::vector<std::string> wanted = words_of(name);
        for (const Author& a : authors) {
            const std::vector<std::string> have = words_of(a.name);
            if (std::all_of(wanted.begin(), wanted.end(),
                            [&](const std::string& w) { return std::find(have.begin(), have.end(), w) != have.end(); }))
                return true;
        }
    }
    return false;
}

ordered_json snippet_json(const Passage& passage, const Paper& paper, const PaperContext& context) {
    const std::string& column = passage.kind == "title" ? paper.title : paper.abstract;
    const std::size_t at = column.find(passage.text);
    const std::size_t start = at == std::string::npos ? 0 : code_points(column, at);
    const ordered_json ids = external_ids(paper, nlohmann::json::parse(paper.extra_json, nullptr, false), context.format);
    ordered_json authors = ordered_json::array();
    for (const Author& a : authors_of(nlohmann::json::parse(paper.extra_json, nullptr, false))) authors.push_back(a.name);
    ordered_json out;
    out["snippet"] = {{"text", passage.text},
                      {"snippetKind", passage.kind},
                      {"section", nullptr},
                      {"snippetOffset", {{"start", start}, {"end", start + code_points(passage.text, passage.text.size())}}},
                      {"annotations", {{"sentences", ordered_json::array()}, {"refMentions", ordered_json::array()}}}};
    out["score"] = passage.score;
    out["paper"] = {{"corpusId", ids.contains("CorpusId") ? ordered_json(ids["CorpusId"].is_string() ? ids["CorpusId"].get<std::string>()
                                                                                                    : ids["CorpusId"].dump())
                                                          : ordered_json(nullptr)},
                    {"paperId", paper.id},
                    {"title", paper.title},
                    {"authors", std::move(authors)},
                    {"openAccessInfo", {{"license", nullptr}, {"status", nullptr}, {"disclaimer", nullptr}}}};
    return out;
}

/// The first day `insertedBefore` excludes ("YYYY-MM-DD"; a year or month stands for its first
/// day), none when it is not given.
std::optional<std::string> inserted_before(const Params& params) {
    const auto given = param(params, "insertedBefore");
    if (!given) return std::nullopt;
    const auto d = parse_date(*given);
    if (!d) bad_param("insertedBefore", *given, "dates are YYYY, YYYY-MM or YYYY-MM-DD");
    char day[16];
    std::snprintf(day, sizeof day, "%04d-%02d-%02d", d->year, d->month ? d->month : 1, d->day ? d->day : 1);
    return std::string(day);
}

/// The day `row` entered the corpus ("YYYY-MM-DD"): its recorded time, else (a corpus written
/// before the times were kept) the corpus's last write, by which it was in.
std::string inserted_day(S2Corpus& corpus, std::size_t row) {
    const std::string& t = corpus.text_index().meta(row).inserted;
    return (t.empty() ? corpus.engine().corpus().manifest().created : t).substr(0, 10);
}

}  // namespace

Reply snippet_search(S2Corpus& corpus, const Params& params) {
    refuse_unknown(params, {"query", "limit", "fields", "paperIds", "authors", "insertedBefore", "year",
                            "publicationDateOrYear", "venue", "fieldsOfStudy", "minCitationCount"});
    const std::string query = required_query(params);
    const std::size_t limit = count_param(params, "limit", 10, 1, 1000);
    check_snippet_fields(params);
    const std::optional<std::string> before = inserted_before(params);
    std::optional<std::set<std::size_t>> papers;
    if (const auto ids = param(params, "paperIds")) {
        papers.emplace();
        for (const std::string& id : comma_items(*ids))
            if (const auto row = row_of_id(corpus, id)) papers->insert(*row);
    }
    const std::vector<std::string> authors = comma_items(param(params, "authors").value_or(""));
    std::vector<std::size_t> all(corpus.text_index().size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    std::vector<bool> allowed(all.size(), false);
    for (const std::size_t row : filtered_rows(corpus, all, params)) allowed[row] = true;
    const auto keep = [&](std::size_t row) {
        if (!allowed[row] || (papers && !papers->count(row))) return false;
        if (before && !(inserted_day(corpus, row) < *before)) return false;
        return authors.empty() || by_any_of(corpus.catalogue().authors(row), authors);
    };
    const std::vector<Passage> found = corpus.text_index().passages(query, limit, passage_tokens, keep);
    const PaperContext context = context_of(corpus);
    ordered_json data = ordered_json::array();
    for (const Passage& p : found)
        data.push_back(snippet_json(p, corpus.engine().papers({static_cast<std::int64_t>(p.row)}).at(0), context));
    return {{"data", std::move(data)}, {"retrievalVersion", "novelty-fts5-bm25"}};
}

}  // namespace novelty::host::s2
