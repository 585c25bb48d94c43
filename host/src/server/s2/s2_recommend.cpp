// POST /recommendations/v1/papers: recommendations from lists of positive and negative papers.
#include "server/s2/s2_common.hpp"
#include "server/s2/s2_error.hpp"
#include "server/s2/s2_handlers.hpp"

#include <cmath>

namespace novelty::host::s2 {

namespace {

constexpr std::size_t max_recommended = 500;
constexpr std::size_t max_list_ids = 500;

/// The rows of the body's list `key` (every id must name a corpus paper).
std::vector<std::size_t> rows_of_list(S2Corpus& corpus, const nlohmann::json& body, const char* key, bool required) {
    std::vector<std::size_t> rows;
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) {
        if (required) throw S2Error(400, std::string("Missing required field: ") + key);
        return rows;
    }
    if (!it->is_array()) throw S2Error(400, std::string(key) + " must be a list of paper ids");
    if (it->size() > max_list_ids) throw S2Error(400, std::string(key) + ": at most 500 paper ids");
    for (const auto& id : *it) {
        if (!id.is_string()) throw S2Error(400, std::string(key) + ": paper ids must be strings, found " + id.dump());
        rows.push_back(row_or_404(corpus, id.get<std::string>()));
    }
    if (required && rows.empty()) throw S2Error(400, std::string(key) + " must name at least one paper");
    return rows;
}

/// sum of the rows' vectors / count, added with `sign` into `acc`.
void add_mean(S2Corpus& corpus, const std::vector<std::size_t>& rows, float sign, std::vector<float>& acc) {
    for (const std::size_t row : rows) {
        const std::vector<float> v = corpus.engine().vector(row);
        if (acc.empty()) acc.assign(v.size(), 0.0f);
        for (std::size_t i = 0; i < v.size(); ++i) acc[i] += sign * v[i] / static_cast<float>(rows.size());
    }
}

}  // namespace

Reply recommendations_from_lists(S2Corpus& corpus, const std::string& body, const Params& params) {
    refuse_unknown(params, {"fields", "limit"});
    const FieldSelection fields = parse_fields(param(params, "fields"), "title", FieldScope::paper);
    const std::size_t limit = count_param(params, "limit", 100, 1, max_recommended);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw S2Error(400, "The body must be a JSON object {\"positivePaperIds\": [...], \"negativePaperIds\": [...]}");
    const std::vector<std::size_t> positive = rows_of_list(corpus, j, "positivePaperIds", true);
    const std::vector<std::size_t> negative = rows_of_list(corpus, j, "negativePaperIds", false);
    std::vector<float> query;
    add_mean(corpus, positive, 1.0f, query);
    add_mean(corpus, negative, -1.0f, query);
    double norm = 0;
    for (const float x : query) norm += static_cast<double>(x) * x;
    if (!(norm > 1e-12))
        throw S2Error(400, "The positive and negative papers cancel out: their mean vectors are equal");
    for (float& x : query) x = static_cast<float>(x / std::sqrt(norm));
    RetrievalRequest r;
    QueryRecord record;
    for (const std::size_t row : positive) record.exclude.push_back(corpus.engine().papers({static_cast<std::int64_t>(row)}).at(0).id);
    for (const std::size_t row : negative) record.exclude.push_back(corpus.engine().papers({static_cast<std::int64_t>(row)}).at(0).id);
    r.records.records.push_back(std::move(record));
    r.records.dim = query.size();
    r.records.given = std::move(query);
    r.records.has_vector = {1};
    r.settings.methods = {"dense"};
    r.settings.k = limit;
    r.key = "positivePaperIds";
    const RetrievalReply reply = corpus.engine().rank(r);
    return {{"recommendedPapers", papers_json(corpus, reply.rankings.at(0).at("dense").rows, fields)}};
}

}  // namespace novelty::host::s2
