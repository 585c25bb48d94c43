// The built-in Embedder: WordPiece tokens -> BERT forward pass -> mean or CLS pooling -> L2.
#include "encoder/bert_model.hpp"
#include "util/parallel_for.hpp"
#include "novelty/util/error.hpp"
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/encoder/wordpiece.hpp"
#include "io/json/json_parse.hpp"

#include <cblas.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <unistd.h>

namespace novelty {

namespace fs = std::filesystem;

std::string embedding_text(const std::string& title, const std::string& text) {
    auto trim = [](const std::string& s) {
        const auto first = s.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) return std::string();
        return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
    };
    const std::string a = trim(title), b = trim(text);
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + "\n\n" + b;
}

namespace {

enum class Pooling { mean, cls };

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

class BuiltinEncoder final : public Embedder {
public:
    BuiltinEncoder(const std::string& model_dir, const EncoderOptions& options)
        : name_(fs::path(model_dir).lexically_normal().filename().string()),
          model_(encoder::BertModel::load(model_dir)),
          tokenizer_(WordPieceTokenizer::load((fs::path(model_dir) / "vocab.txt").string(), read_wordpiece_config(model_dir))),
          pooling_(read_pooling(model_dir)),
          options_(options) {
        if (name_.empty() || name_ == ".") name_ = fs::absolute(model_dir).lexically_normal().parent_path().filename().string();
        if (tokenizer_.config().max_length > model_.config().max_positions)
            throw InputError(model_dir, 0, "the tokenizer's maximum length exceeds the model's positions");
    }

    std::string name() const override { return name_; }
    std::size_t dim() const override { return model_.config().hidden; }
    std::string pooling() const override { return pooling_ == Pooling::cls ? "cls" : "mean"; }

    std::vector<float> embed(const std::vector<std::string>& texts) override {
        const std::size_t n = texts.size(), h = dim();
        std::vector<std::vector<std::int32_t>> tokens(n);
        for (std::size_t i = 0; i < n; ++i) tokens[i] = tokenizer_.encode(texts[i]);
        // Similar lengths together; groups of about tokens_per_group tokens.
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return tokens[a].size() < tokens[b].size(); });
        std::vector<std::pair<std::size_t, std::size_t>> groups;  // [begin, end) in `order`
        for (std::size_t begin = 0; begin < n;) {
            std::size_t end = begin, group_tokens = 0;
            while (end < n && (end == begin || group_tokens + tokens[order[end]].size() <= options_.tokens_per_group))
                group_tokens += tokens[order[end++]].size();
            groups.emplace_back(begin, end);
            begin = end;
        }
        std::vector<float> out(n * h);
        openblas_set_num_threads(1);
        parallel_for_blocks(groups.size(), options_.threads, [&](std::size_t g) {
            const auto [begin, end] = groups[g];
            std::vector<const std::vector<std::int32_t>*> seqs;
            for (std::size_t i = begin; i < end; ++i) seqs.push_back(&tokens[order[i]]);
            std::vector<float> hidden;
            model_.forward(seqs, hidden);
            std::size_t row = 0;
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t len = tokens[order[i]].size();
                float* dst = out.data() + order[i] * h;
                if (pooling_ == Pooling::cls) {
                    std::copy(hidden.begin() + row * h, hidden.begin() + (row + 1) * h, dst);
                } else {
                    std::vector<double> sum(h, 0.0);
                    for (std::size_t t = 0; t < len; ++t)
                        for (std::size_t d = 0; d < h; ++d) sum[d] += hidden[(row + t) * h + d];
                    for (std::size_t d = 0; d < h; ++d) dst[d] = static_cast<float>(sum[d] / static_cast<double>(len));
                }
                double norm = 0;
                for (std::size_t d = 0; d < h; ++d) norm += double(dst[d]) * dst[d];
                const double inv = norm > 0 ? 1.0 / std::sqrt(norm) : 0.0;
                for (std::size_t d = 0; d < h; ++d) dst[d] = static_cast<float>(dst[d] * inv);
                row += len;
            }
        });
        return out;
    }

private:
    std::string name_;
    encoder::BertModel model_;
    WordPieceTokenizer tokenizer_;
    Pooling pooling_;
    EncoderOptions options_;
};

}  // namespace

std::unique_ptr<Embedder> load_builtin_encoder(const std::string& model_dir, const EncoderOptions& options) {
    if (!fs::is_directory(model_dir)) throw InputError(model_dir, 0, "no such model directory");
    return std::make_unique<BuiltinEncoder>(model_dir, options);
}

std::string default_model_dir() {
    if (const char* env = std::getenv("NOVELTY_MODEL_DIR"); env && *env) return env;
    // The executable lives in <project>/build/<config>/ (or deeper, for tests): look upwards.
    std::error_code ec;
    fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    for (int up = 0; up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
        const fs::path candidate = dir / "models" / "all-MiniLM-L6-v2";
        if (fs::exists(candidate / "config.json", ec)) return candidate.string();
        if (dir == dir.parent_path()) break;
    }
    throw UsageError("the default encoder model (all-MiniLM-L6-v2) was not found: run scripts/setup.sh, which installs "
                     "it and links it as models/all-MiniLM-L6-v2, or set NOVELTY_MODEL_DIR, or name a model directory",
                     "embedder");
}

}  // namespace novelty
