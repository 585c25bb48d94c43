#include "novelty/result_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace novelty {

namespace {

using ordered = nlohmann::ordered_json;

ordered number_or_null(double v) { return std::isfinite(v) ? ordered(v) : ordered(nullptr); }
ordered text_or_null(const std::string& s) { return s.empty() ? ordered(nullptr) : ordered(s); }

}  // namespace

std::string score_result_json(const Corpus& corpus, const ScoreReportContext& context, const std::string& id,
                              const IdeaScore& s, const std::string& cutoff, const std::vector<std::string>& excluded) {
    auto wanted = [&](const char* method) { return context.methods.empty() || context.methods.count(method) > 0; };
    auto asked = [&](const char* method) { return context.methods.count(method) > 0; };
    ordered j;
    j["id"] = id;
    ordered scores = ordered::object();
    if (wanted("rnd")) scores["rnd"] = s.rnd;
    if (wanted("hd")) scores["hd"] = number_or_null(s.hd);
    if (wanted("on")) scores["on"] = s.on ? ordered(*s.on) : ordered(nullptr);
    if (wanted("density")) scores["density"] = s.nd;
    if (asked("density_p")) scores["density_p"] = s.density_p;
    if (asked("rnd_euclid")) scores["rnd_euclid"] = s.rnd_euclid;
    if (asked("rel_hd")) scores["rel_hd"] = number_or_null(s.rel_hd);
    if (asked("rnd_hd")) scores["rnd_hd"] = number_or_null(s.rnd_hd);
    j["scores"] = scores;
    j["nd"] = s.nd;
    ordered neighbors = ordered::array();
    for (std::size_t r = 0; r < std::min(context.evidence, s.neighbor_rows.size()); ++r) {
        const auto row = static_cast<std::size_t>(s.neighbor_rows[r]);
        const auto [paper_id, title] = corpus.id_and_title(row);
        ordered nb{{"id", paper_id}, {"row", row}, {"sim", s.neighbor_sims[r]}, {"title", title}};
        if (r < s.neighbor_nd.size()) nb["nd"] = s.neighbor_nd[r];
        neighbors.push_back(nb);
    }
    j["neighbors"] = neighbors;
    j["provenance"] = {{"corpus", context.corpus_identity},
                       {"embedder", context.embedder},
                       {"p", context.p},
                       {"q", context.q},
                       {"cutoff", text_or_null(cutoff)},
                       {"excluded", excluded},
                       {"include_self", context.include_self},
                       {"split", text_or_null(context.split)},
                       {"searchable", s.searchable}};
    if (!context.split.empty()) j["provenance"]["historical_from"] = text_or_null(context.historical_from);
    if (!context.backend.empty()) j["provenance"]["backend"] = context.backend;
    if (!s.densities_by.empty()) j["provenance"]["densities_backend"] = s.densities_by;
    return j.dump();
}

std::string search_result_json(const Corpus& corpus, const std::string& query_id, const TopK& top, std::size_t query,
                               const std::string& cutoff, std::size_t searchable, std::size_t k) {
    ordered neighbors = ordered::array();
    const std::size_t n = k == 0 ? top.count[query] : std::min(k, top.count[query]);
    for (std::size_t r = 0; r < n; ++r) {
        const auto row = static_cast<std::size_t>(top.row(query, r));
        const auto [id, title] = corpus.id_and_title(row);
        neighbors.push_back({{"id", id}, {"row", row}, {"sim", top.sim(query, r)}, {"title", title}});
    }
    ordered line;
    line["query"] = query_id;
    line["neighbors"] = neighbors;
    line["cutoff"] = text_or_null(cutoff);
    line["searchable"] = searchable;
    return line.dump();
}

}  // namespace novelty
