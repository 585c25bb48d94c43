#include "encoder/encoder_parts.hpp"

#include "io/json/json_parse.hpp"
#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

namespace novelty::encoder {

namespace fs = std::filesystem;

Pooling read_pooling(const std::string& model_dir) {
    const fs::path path = fs::path(model_dir) / "1_Pooling" / "config.json";
    std::ifstream in(path);
    if (!in) return Pooling::mean;  // sentence-transformers' default for BERT models
    nlohmann::json j;
    try {
        j = parse_json(std::string(std::istreambuf_iterator<char>(in), {}));
    } catch (const JsonError& e) {
        throw InputError(path.string(), 0, std::string("invalid JSON: ") + e.what());
    }
    // Newer sentence-transformers write "pooling_mode": "cls" | "mean" | ...; older ones one
    // boolean per mode.
    if (j.contains("pooling_mode") && j["pooling_mode"].is_string()) {
        const std::string mode = j["pooling_mode"].get<std::string>();
        if (mode == "cls") return Pooling::cls;
        if (mode == "mean") return Pooling::mean;
        throw InputError(path.string(), 0, "unsupported pooling_mode '" + mode + "' (only mean or cls)");
    }
    if (j.value("pooling_mode_cls_token", false)) return Pooling::cls;
    if (j.value("pooling_mode_mean_tokens", false)) return Pooling::mean;
    throw InputError(path.string(), 0, "unsupported pooling: only mean tokens or the CLS token");
}

std::string pooling_name(Pooling pooling) { return pooling == Pooling::cls ? "cls" : "mean"; }

std::string model_name(const std::string& model_dir) {
    std::string name = fs::path(model_dir).lexically_normal().filename().string();
    if (name.empty() || name == ".") name = fs::absolute(model_dir).lexically_normal().parent_path().filename().string();
    return name;
}

void check_lengths(const std::string& model_dir, const ModelTokenizer& tokenizer, const BertConfig& config) {
    if (tokenizer.max_length() > config.max_tokens())
        throw InputError(model_dir, 0, "the tokenizer's maximum length (" + std::to_string(tokenizer.max_length()) +
                                           ") exceeds the model's positions (" + std::to_string(config.max_tokens()) + ")");
}

TokenGroups group_by_tokens(const std::vector<std::vector<std::int32_t>>& tokens, std::size_t budget) {
    TokenGroups g;
    const std::size_t n = tokens.size();
    g.order.resize(n);
    std::iota(g.order.begin(), g.order.end(), 0);
    std::stable_sort(g.order.begin(), g.order.end(),
                     [&](std::size_t a, std::size_t b) { return tokens[a].size() < tokens[b].size(); });
    for (std::size_t begin = 0; begin < n;) {
        std::size_t end = begin, group_tokens = 0;
        while (end < n && (end == begin || group_tokens + tokens[g.order[end]].size() <= budget))
            group_tokens += tokens[g.order[end++]].size();
        g.groups.emplace_back(begin, end);
        begin = end;
    }
    return g;
}

void pool_and_normalize(const float* hidden, std::size_t len, std::size_t h, Pooling pooling, float* dst) {
    if (pooling == Pooling::cls) {
        std::copy(hidden, hidden + h, dst);
    } else {
        std::vector<double> sum(h, 0.0);
        for (std::size_t t = 0; t < len; ++t)
            for (std::size_t d = 0; d < h; ++d) sum[d] += hidden[t * h + d];
        for (std::size_t d = 0; d < h; ++d) dst[d] = static_cast<float>(sum[d] / static_cast<double>(len));
    }
    double norm = 0;
    for (std::size_t d = 0; d < h; ++d) norm += double(dst[d]) * dst[d];
    const double inv = norm > 0 ? 1.0 / std::sqrt(norm) : 0.0;
    for (std::size_t d = 0; d < h; ++d) dst[d] = static_cast<float>(dst[d] * inv);
}

}  // namespace novelty::encoder
