// Reciprocal-rank fusion, and fusion over the rewrites of a query.
#include "novelty/util/error.hpp"
#include "novelty/retrieval/retrieval.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace novelty {

Ranking reciprocal_rank_fusion(std::span<const Ranking> rankings, std::size_t depth, double k) {
    if (!(k > 0)) throw UsageError("the reciprocal-rank fusion constant must be positive");
    if (depth < 1) throw UsageError("the fusion depth must be at least 1");
    std::unordered_map<std::int64_t, double> score;
    for (const Ranking& ranking : rankings) {
        std::unordered_set<std::int64_t> seen;
        for (std::size_t i = 0; i < ranking.rows.size(); ++i) {
            const std::int64_t row = ranking.rows[i];
            if (!seen.insert(row).second) continue;  // a repeat counts at its first rank only
            score[row] += 1.0 / (k + static_cast<double>(i + 1));
        }
    }
    std::vector<std::pair<std::int64_t, double>> all(score.begin(), score.end());
    const auto better = [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; };
    const std::size_t n = std::min(depth, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), better);
    Ranking fused;
    fused.rows.reserve(n);
    fused.scores.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        fused.rows.push_back(all[i].first);
        fused.scores.push_back(all[i].second);
    }
    return fused;
}

namespace {

std::string trimmed(const std::string& text) {
    const auto begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return {};
    const auto end = text.find_last_not_of(" \t\r\n");
    return text.substr(begin, end - begin + 1);
}

}  // namespace

std::vector<std::string> rewritten_texts(QueryRewriter& rewriter, const std::string& query, std::size_t n,
                                         bool include_original) {
    std::vector<std::string> texts;
    std::unordered_set<std::string> seen;
    const auto add = [&](const std::string& text) {
        std::string t = trimmed(text);
        if (!t.empty() && seen.insert(t).second) texts.push_back(std::move(t));
    };
    if (include_original) add(query);
    if (n > 0) {
        const std::vector<std::string> rewrites = rewriter.rewrite(query, n);
        if (rewrites.size() > n)
            throw Error("the query rewriter '" + rewriter.name() + "' returned " + std::to_string(rewrites.size()) +
                        " texts when asked for at most " + std::to_string(n));
        for (const auto& text : rewrites) add(text);
    }
    return texts;
}

Ranking fuse_texts(const std::vector<std::string>& texts,
                   const std::function<std::vector<Ranking>(const std::string& text)>& rank_text, std::size_t depth,
                   double k) {
    std::vector<Ranking> rankings;
    for (const auto& text : texts)
        for (Ranking& r : rank_text(text)) rankings.push_back(std::move(r));
    return reciprocal_rank_fusion(rankings, depth, k);
}

}  // namespace novelty
