#include "server/s2/s2_handlers.hpp"

#include "server/paper_ids.hpp"
#include "server/s2/s2_common.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_fields.hpp"

#include <algorithm>
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

FieldSelection fields_of(const Params& params) { return parse_fields(param(params, "fields"), "title", FieldScope::paper); }

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
    DateRange dates = dates_of(params);
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

/// The ranked rows that pass the record filters (all of them when none is given).
std::vector<std::int64_t> kept_rows(S2Corpus& corpus, const Ranking& ranking, const RecordFilter& filter) {
    if (!filter.active()) return ranking.rows;
    std::vector<std::int64_t> kept;
    for (const Paper& p : corpus.engine().papers(ranking.rows))
        if (filter.allows(p)) kept.push_back(static_cast<std::int64_t>(p.row));
    return kept;
}

std::vector<std::string> terms(const std::string& text) {
    std::vector<std::string> out = words_of(text);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

double title_match_score(const std::string& query, const std::string& title) {
    const std::vector<std::string> q = terms(query), t = terms(title);
    if (q.empty() || t.empty()) return 0;
    std::vector<std::string> common;
    std::set_intersection(q.begin(), q.end(), t.begin(), t.end(), std::back_inserter(common));
    return 2.0 * static_cast<double>(common.size()) / static_cast<double>(q.size() + t.size());
}

std::optional<std::size_t> row_of_id(S2Corpus& corpus, const std::string& id) {
    const IdLookup lookup = paper_id_lookup(id);
    for (const std::string& key : lookup.keys)
        if (const auto row = corpus.engine().find_row(key)) return row;
    if (lookup.keys.empty()) return std::nullopt;
    if (!lookup.s2_sha.empty()) return corpus.row_of_sha(lookup.s2_sha);
    return corpus.row_of_external_id(lookup.keys.back());
}

std::size_t row_or_404(S2Corpus& corpus, const std::string& id) {
    const auto row = row_of_id(corpus, id);
    if (!row) throw S2Error(404, "Paper with id " + clip_for_message(id) + " not found");
    return *row;
}

Reply paper_search(S2Corpus& corpus, const Params& params) {
    refuse_unknown(params, {"query", "fields", "offset", "limit", S2_FILTER_PARAMS, "ranking"});
    const std::string query = required_query(params);
    const FieldSelection fields = fields_of(params);
    const Page page = page_of(params, 100, 100, max_ranked - 1);
    if (page.offset + page.limit > max_ranked)
        bad_param("offset", std::to_string(page.offset), "offset + limit must be at most 1000 (the ranking's depth)");
    const std::string method = ranking_method(params);
    const RecordFilter filter = record_filter(params);
    const RetrievalReply reply = corpus.engine().rank(filtered_request(query, method, max_ranked, params));
    const std::vector<std::int64_t> rows = kept_rows(corpus, reply.rankings.at(0).at(method), filter);
    return paged(rows.size(), page, true, [&](std::size_t begin, std::size_t end) {
        return papers_json(corpus, std::vector<std::int64_t>(rows.begin() + begin, rows.begin() + end), fields);
    });
}

Reply paper_match(S2Corpus& corpus, const Params& params) {
    // The client libraries page every search, this one too: offset and limit are taken and the
    // answer is still the one best match.
    refuse_unknown(params, {"query", "fields", "offset", "limit", S2_FILTER_PARAMS});
    page_of(params, 1, 1000, 9999);
    const std::string query = required_query(params);
    const FieldSelection fields = fields_of(params);
    const RecordFilter filter = record_filter(params);
    const RetrievalReply reply = corpus.engine().rank(filtered_request(query, "bm25", match_candidates, params));
    const std::vector<Paper> papers = corpus.engine().papers(reply.rankings.at(0).at("bm25").rows);
    std::size_t best = papers.size();
    double best_score = 0;
    for (std::size_t i = 0; i < papers.size(); ++i) {
        const double score = title_match_score(query, papers[i].title);
        if (score > best_score && filter.allows(papers[i])) best = i, best_score = score;  // ties: the better BM25 rank
    }
    if (best == papers.size() || best_score < min_match_score) throw S2Error(404, "Title match not found");
    FieldSelection with_title = fields;
    if (std::find(with_title.fields.begin(), with_title.fields.end(), "title") == with_title.fields.end())
        with_title.fields.insert(with_title.fields.begin(), "title");
    ordered_json paper = paper_json(papers[best], with_title, context_of(corpus));
    paper["matchScore"] = best_score;
    return {{"data", ordered_json::array({std::move(paper)})}};
}

Reply paper_details(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields"});
    const FieldSelection fields = fields_of(params);
    const std::size_t row = row_or_404(corpus, id);
    return papers_json(corpus, {static_cast<std::int64_t>(row)}, fields).at(0);
}

Reply paper_batch(S2Corpus& corpus, const std::string& body, const Params& params) {
    refuse_unknown(params, {"fields"});
    const FieldSelection fields = fields_of(params);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("ids") || !j["ids"].is_array())
        throw S2Error(400, "The body must be a JSON object {\"ids\": [paper ids]}");
    const auto& ids = j["ids"];
    if (ids.size() > max_batch_ids)
        throw S2Error(400, "Cannot process more than 500 paper ids at a time (" + std::to_string(ids.size()) + " given)");
    const PaperContext context = context_of(corpus);
    ordered_json out = ordered_json::array();
    for (const auto& id : ids) {
        if (!id.is_string()) throw S2Error(400, "Paper ids must be strings, found " + id.dump());
        const auto row = row_of_id(corpus, id.get<std::string>());
        out.push_back(row ? paper_json(corpus.engine().papers({static_cast<std::int64_t>(*row)}).at(0), fields, context)
                          : ordered_json(nullptr));
    }
    return out;
}

Reply recommendations(S2Corpus& corpus, const std::string& id, const Params& params) {
    refuse_unknown(params, {"fields", "limit", "from"});
    const FieldSelection fields = fields_of(params);
    const std::size_t limit = count_param(params, "limit", 100, 1, max_batch_ids);
    const std::string from = param(params, "from").value_or("recent");
    if (from != "recent" && from != "all-cs") bad_param("from", from, "choose recent or all-cs (both rank the whole corpus)");
    const std::size_t row = row_or_404(corpus, id);
    RetrievalRequest r;
    QueryRecord record;
    record.id = corpus.engine().papers({static_cast<std::int64_t>(row)}).at(0).id;  // its vector; itself left out
    r.records.records.push_back(std::move(record));
    r.settings.methods = {"dense"};
    r.settings.k = limit;
    r.key = "paper";
    const RetrievalReply reply = corpus.engine().rank(r);
    return {{"recommendedPapers", papers_json(corpus, reply.rankings.at(0).at("dense").rows, fields)}};
}

}  // namespace novelty::host::s2
