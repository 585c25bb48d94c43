#include "novelty/request/result_json.hpp"

#include <nlohmann/json.hpp>

#include "util/parallel_for.hpp"
#include "io/json_text.hpp"
#include "novelty/util/error.hpp"

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
    if (!context.embedder_precision.empty()) j["provenance"]["embedder_precision"] = context.embedder_precision;
    if (!context.ideas_precision.empty()) j["provenance"]["ideas_embedder_precision"] = context.ideas_precision;
    if (!s.densities_by.empty()) j["provenance"]["densities_backend"] = s.densities_by;
    if (!s.densities_path.empty()) j["provenance"]["densities_path"] = s.densities_path;
    return j.dump();
}

std::string search_result_json(const Corpus& corpus, const std::string& query_id, const TopK& top, std::size_t query,
                               const std::string& cutoff, std::size_t searchable, std::size_t k) {
    const PaperLabels labels = corpus.labels(top.rows);
    std::string line;
    append_search_result_json(line, labels, query_id, top, query, cutoff, searchable, k);
    return line;
}

void append_search_result_json(std::string& out, const PaperLabels& labels, const std::string& query_id,
                               const TopK& top, std::size_t query, const std::string& cutoff, std::size_t searchable,
                               std::size_t k) {
    using namespace json_text;
    const std::size_t n = k == 0 ? top.count[query] : std::min(k, top.count[query]);
    if (labels.index_of_input.size() != top.rows.size())
        throw UsageError("append_search_result_json: the labels were looked up for " +
                         std::to_string(labels.index_of_input.size()) + " rows, the result holds " +
                         std::to_string(top.rows.size()), "labels");
    out += "{\"query\":";
    append_string(out, query_id);
    out += ",\"neighbors\":[";
    for (std::size_t r = 0; r < n; ++r) {
        const std::int64_t row = top.row(query, r);
        const std::size_t at = labels.index_of_input[query * top.k + r];
        out += r == 0 ? "{\"id\":" : ",{\"id\":";
        append_string(out, labels.ids[at]);
        out += ",\"row\":";
        append_count(out, static_cast<std::size_t>(row));
        out += ",\"sim\":";
        append_number(out, top.sim(query, r));
        out += ",\"title\":";
        append_string(out, labels.titles.empty() ? std::string() : labels.titles[at]);
        out += '}';
    }
    out += "],\"cutoff\":";
    if (cutoff.empty())
        out += "null";
    else
        append_string(out, cutoff);
    out += ",\"searchable\":";
    append_count(out, searchable);
    out += '}';
}

std::string format_lines(std::size_t n, const std::function<void(std::size_t i, std::string& out)>& line,
                         std::size_t threads) {
    constexpr std::size_t lines_per_block = 64;
    const std::size_t n_blocks = (n + lines_per_block - 1) / lines_per_block;
    std::vector<std::string> blocks(n_blocks);
    parallel_for_blocks(n_blocks, threads, [&](std::size_t b) {
        for (std::size_t i = b * lines_per_block; i < std::min(n, (b + 1) * lines_per_block); ++i) {
            line(i, blocks[b]);
            blocks[b] += '\n';
        }
    });
    std::size_t bytes = 0;
    for (const auto& block : blocks) bytes += block.size();
    std::string text;
    text.reserve(bytes);
    for (auto& block : blocks) {
        text += block;
        std::string().swap(block);
    }
    return text;
}

}  // namespace novelty
