// retrieval_record_json: one query's JSON Lines record of a retrieval (retrieval_run.hpp).
#include "novelty/request/retrieval_run.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace novelty {

namespace {

using ordered_json = nlohmann::ordered_json;

/// One ranking as the JSON Lines output lists it: {"id", "row", "rank", "score", "title"} each.
ordered_json ranking_json(const Ranking& r, const Corpus& corpus) {
    ordered_json list = ordered_json::array();
    for (std::size_t j = 0; j < r.size(); ++j) {
        const auto row = static_cast<std::size_t>(r.rows[j]);
        auto [id, title] = corpus.id_and_title(row);
        list.push_back({{"id", id}, {"row", row}, {"rank", j + 1}, {"score", r.scores[j]}, {"title", title}});
    }
    return list;
}

/// Records the rewrites a query's fusion used (the first n of each mode's list) under
/// "rewrites", and failed LLM calls under "rewrite_errors", so that the record can be fed back
/// as a rewrites file.
void add_rewrites(ordered_json& line, const std::vector<RewriteMode>& modes, const RewritesById& rewrites,
                  const std::string& qid) {
    const auto it = rewrites.find(qid);
    ordered_json used = ordered_json::object(), errors = ordered_json::object();
    for (const RewriteMode& mode : modes) {
        const bool hyde = mode.tag == "hyde";
        std::vector<std::string> list;
        if (it != rewrites.end()) {
            const auto& all = hyde ? it->second.hyde : it->second.expand;
            list.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(mode.n, all.size())));
            const std::string& error = hyde ? it->second.hyde_error : it->second.expand_error;
            if (!error.empty()) errors[mode.tag] = error;
        }
        used[mode.tag] = list;
    }
    line["rewrites"] = used;
    for (const RewriteMode& mode : modes)
        if (mode.tag == "expand") line["expand_mode"] = mode.append ? "single" : "multi";
    line["fuse_original"] = !modes.empty() && modes.front().include_original;
    if (!errors.empty()) line["rewrite_errors"] = errors;
}

}  // namespace

std::string retrieval_record_json(const Corpus& corpus, const std::string& query_id, const std::string& cutoff,
                                  std::size_t searchable, const RankingsByTag& rankings,
                                  const std::vector<std::string>& tags, const std::vector<RewriteMode>& modes,
                                  const RewritesById& rewrites) {
    ordered_json results = ordered_json::object();
    for (const auto& tag : tags) results[tag] = ranking_json(rankings.at(tag), corpus);
    ordered_json line;
    line["query"] = query_id;
    line["cutoff"] = cutoff.empty() ? ordered_json(nullptr) : ordered_json(cutoff);
    line["searchable"] = searchable;
    line["results"] = results;
    if (!modes.empty()) add_rewrites(line, modes, rewrites, query_id);
    return line.dump();
}

}  // namespace novelty
