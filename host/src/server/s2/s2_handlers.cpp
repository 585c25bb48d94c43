#include "server/s2/s2_handlers.hpp"

#include "server/s2/s2_error.hpp"
#include "server/s2/s2_fields.hpp"

#include "novelty/util/error.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace novelty::host::s2 {

namespace {

using nlohmann::ordered_json;

/// The API's relevance ranking reaches 1,000 results at most; so does ours.
constexpr std::size_t max_ranked = 1000;
constexpr std::size_t max_batch_ids = 500;
/// Title matches below this score are no match.
constexpr double min_match_score = 0.8;
/// Candidates BM25 offers the title match.
constexpr std::size_t match_candidates = 20;

const std::vector<std::string> default_fields{"title"};

PaperContext context_of(ServerEngine& engine) {
    PaperContext c;
    const auto& sources = engine.corpus().manifest().sources;
    if (!sources.empty() && std::all_of(sources.begin(), sources.end(),
                                        [&](const SourceInfo& s) { return s.format == sources.front().format; }))
        c.format = sources.front().format;
    c.embedder = engine.embedder_name();
    c.vector = [&engine](std::size_t row) { return engine.vector(row); };
    return c;
}

std::vector<std::string> fields_of(ServerEngine& engine, const Params& params) {
    return parse_fields(param(params, "fields"), default_fields, engine.embedder_name());
}

std::string required_query(const Params& params) {
    const auto q = param(params, "query");
    if (!q || std::all_of(q->begin(), q->end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
        throw S2Error(400, "Missing required parameter: query");
    return *q;
}

/// The date range and metadata filter of `year`, `publicationDateOrYear`, `venue`,
/// `fieldsOfStudy` and `minCitationCount`, on a retrieval of one text query.
RetrievalRequest filtered_request(const std::string& query, const std::string& method, std::size_t k,
                                  const Params& params) {
    RetrievalRequest r;
    QueryRecord record;  // no id: it names no corpus paper, so nothing is left out for it
    record.title = query;
    r.records.records.push_back(std::move(record));
    r.settings.methods = {method};
    r.settings.k = k;
    r.settings.fusion_depth = max_ranked;
    r.key = "query";
    DateRange dates;
    if (const auto y = param(params, "year")) dates = year_range(*y);
    if (const auto d = param(params, "publicationDateOrYear")) dates = intersect(dates, date_range(*d));
    // A lower bound alone still leaves out the undated papers, which no range admits.
    if (dates.from && !dates.through) dates.through = PartialDate{9999, 0, 0};
    r.cutoff = dates.through;
    if (dates.from) r.exclude_through = period_before(*dates.from);
    r.filter = metadata_filter(params);
    return r;
}

std::string ranking_method(const Params& params) {
    const std::string m = param(params, "ranking").value_or("hybrid");
    if (m != "hybrid" && m != "dense" && m != "bm25") bad_param("ranking", m, "choose hybrid (default), dense or bm25");
    return m;
}

ordered_json papers_json(ServerEngine& engine, const std::vector<std::int64_t>& rows,
                         const std::vector<std::string>& fields) {
    const PaperContext context = context_of(engine);
    ordered_json out = ordered_json::array();
    for (const Paper& p : engine.papers(rows)) out.push_back(paper_json(p, fields, context));
    return out;
}

std::vector<std::string> terms(const std::string& text) {
    std::vector<std::string> out;
    std::string term;
    for (const char c : text + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80) {
            term += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!term.empty()) {
            out.push_back(term);
            term.clear();
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::size_t row_or_404(ServerEngine& engine, const std::string& id) {
    const auto row = row_of_id(engine, id);
    if (!row) throw S2Error(404, "Paper with id " + clip_for_message(id) + " not found");
    return *row;
}

}  // namespace

double title_match_score(const std::string& query, const std::string& title) {
    const std::vector<std::string> q = terms(query), t = terms(title);
    if (q.empty() || t.empty()) return 0;
    std::vector<std::string> common;
    std::set_intersection(q.begin(), q.end(), t.begin(), t.end(), std::back_inserter(common));
    return 2.0 * static_cast<double>(common.size()) / static_cast<double>(q.size() + t.size());
}

std::optional<std::size_t> row_of_id(ServerEngine& engine, const std::string& id) {
    if (id.empty()) return std::nullopt;
    if (const auto row = engine.find_row(id)) return row;
    const auto after = [&](const std::string& prefix) -> std::optional<std::string> {
        if (id.size() <= prefix.size()) return std::nullopt;
        for (std::size_t i = 0; i < prefix.size(); ++i)
            if (std::tolower(static_cast<unsigned char>(id[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
                return std::nullopt;
        return id.substr(prefix.size());
    };
    if (const auto pmc = after("PMCID:")) return engine.find_row("pmc:" + *pmc);
    if (const auto url = after("URL:")) return engine.find_row(*url);
    return std::nullopt;
}

nlohmann::ordered_json paper_search(ServerEngine& engine, const Params& params) {
    refuse_unknown(params, {"query", "fields", "offset", "limit", "year", "publicationDateOrYear", "venue",
                            "fieldsOfStudy", "minCitationCount", "ranking"});
    const std::string query = required_query(params);
    const std::vector<std::string> fields = fields_of(engine, params);
    const std::size_t offset = count_param(params, "offset", 0, 0, max_ranked - 1);
    const std::size_t limit = count_param(params, "limit", 100, 1, 100);
    if (offset + limit > max_ranked)
        bad_param("offset", std::to_string(offset), "offset + limit must be at most 1000 (the ranking's depth)");
    const std::string method = ranking_method(params);
    const RetrievalReply reply = engine.rank(filtered_request(query, method, max_ranked, params));
    const Ranking& ranking = reply.rankings.at(0).at(method);
    const std::size_t total = ranking.size();
    const std::size_t end = std::min(total, offset + limit);
    std::vector<std::int64_t> rows;
    for (std::size_t i = offset; i < end; ++i) rows.push_back(ranking.rows[i]);
    ordered_json out{{"total", total}, {"offset", offset}};
    if (offset + limit < total) out["next"] = offset + limit;
    out["data"] = papers_json(engine, rows, fields);
    return out;
}

nlohmann::ordered_json paper_match(ServerEngine& engine, const Params& params) {
    refuse_unknown(params, {"query", "fields", "year", "publicationDateOrYear", "venue", "fieldsOfStudy",
                            "minCitationCount"});
    const std::string query = required_query(params);
    const std::vector<std::string> fields = fields_of(engine, params);
    const RetrievalReply reply = engine.rank(filtered_request(query, "bm25", match_candidates, params));
    const Ranking& candidates = reply.rankings.at(0).at("bm25");
    const std::vector<Paper> papers = engine.papers(candidates.rows);
    std::size_t best = papers.size();
    double best_score = 0;
    for (std::size_t i = 0; i < papers.size(); ++i) {
        const double score = title_match_score(query, papers[i].title);
        if (score > best_score) best = i, best_score = score;  // ties: the better BM25 rank
    }
    if (best == papers.size() || best_score < min_match_score) throw S2Error(404, "Title match not found");
    std::vector<std::string> with_title = fields;
    if (std::find(with_title.begin(), with_title.end(), "title") == with_title.end())
        with_title.insert(with_title.begin(), "title");
    ordered_json paper = paper_json(papers[best], with_title, context_of(engine));
    paper["matchScore"] = best_score;
    return {{"data", ordered_json::array({std::move(paper)})}};
}

nlohmann::ordered_json paper_details(ServerEngine& engine, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields"});
    const std::vector<std::string> fields = fields_of(engine, params);
    const std::size_t row = row_or_404(engine, id);
    return papers_json(engine, {static_cast<std::int64_t>(row)}, fields).at(0);
}

nlohmann::ordered_json paper_batch(ServerEngine& engine, const std::string& body, const Params& params) {
    refuse_unknown(params, {"fields"});
    const std::vector<std::string> fields = fields_of(engine, params);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("ids") || !j["ids"].is_array())
        throw S2Error(400, "The body must be a JSON object {\"ids\": [paper ids]}");
    const auto& ids = j["ids"];
    if (ids.size() > max_batch_ids)
        throw S2Error(400, "Cannot process more than 500 paper ids at a time (" + std::to_string(ids.size()) + " given)");
    const PaperContext context = context_of(engine);
    ordered_json out = ordered_json::array();
    for (const auto& id : ids) {
        if (!id.is_string()) throw S2Error(400, "Paper ids must be strings, found " + id.dump());
        const auto row = row_of_id(engine, id.get<std::string>());
        out.push_back(row ? paper_json(engine.papers({static_cast<std::int64_t>(*row)}).at(0), fields, context)
                          : ordered_json(nullptr));
    }
    return out;
}

nlohmann::ordered_json recommendations(ServerEngine& engine, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "limit", "from"});
    const std::vector<std::string> fields = fields_of(engine, params);
    const std::size_t limit = count_param(params, "limit", 100, 1, max_batch_ids);
    const std::string from = param(params, "from").value_or("recent");
    if (from != "recent" && from != "all-cs") bad_param("from", from, "choose recent or all-cs (both rank the whole corpus)");
    const std::size_t row = row_or_404(engine, id);
    RetrievalRequest r;
    QueryRecord record;
    record.id = engine.papers({static_cast<std::int64_t>(row)}).at(0).id;  // its vector; itself left out
    r.records.records.push_back(std::move(record));
    r.settings.methods = {"dense"};
    r.settings.k = limit;
    r.key = "paper";
    const RetrievalReply reply = engine.rank(r);
    return {{"recommendedPapers", papers_json(engine, reply.rankings.at(0).at("dense").rows, fields)}};
}

}  // namespace novelty::host::s2
