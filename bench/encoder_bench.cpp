// Times the built-in encoder in-process, for bench/encoder_vs_sentence_transformers.py (CPU),
// bench/encoder_gpu_vs_torch.py and bench/device_check.sh (CUDA).
//   encoder_bench MODEL_DIR RECORDS.jsonl OUT.npy [threads] [device] [IDS_OUT.txt] [LIMIT] [precision]
// device: cpu (default), cuda or auto. IDS_OUT.txt, when given (not ""), receives each text's token
// ids (one line per text, space-separated), for a peer that has no tokenizer. LIMIT: the first
// LIMIT records only (0 = all). precision: the CPU encoder's auto (default), f32, bf16 or int8. Prints one JSON object (texts, tokens, seconds to load, to tokenise
// alone and to embed, texts per second, peak RSS) and writes the embeddings.
#include "novelty/encoder/text_encoder.hpp"
#include "novelty/encoder/unigram.hpp"
#include "novelty/encoder/wordpiece.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/request/query_records.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The model's tokenizer as a function (one thread), to time tokenisation alone.
std::function<std::vector<std::int32_t>(const std::string&)> tokenizer_of(const std::string& dir) {
    if (novelty::UnigramTokenizer::is_unigram(dir + "/tokenizer.json")) {
        auto t = std::make_shared<novelty::UnigramTokenizer>(novelty::UnigramTokenizer::load_model_dir(dir));
        return [t](const std::string& s) { return t->encode(s); };
    }
    auto t = std::make_shared<novelty::WordPieceTokenizer>(novelty::WordPieceTokenizer::load_model_dir(dir));
    return [t](const std::string& s) { return t->encode(s); };
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: encoder_bench MODEL_DIR RECORDS.jsonl OUT.npy [threads] [device] [IDS_OUT.txt] [LIMIT] "
                             "[precision]\n");
        return 2;
    }
    try {
        novelty::EncoderOptions options;
        if (argc > 4) options.threads = std::stoul(argv[4]);
        if (argc > 5) options.device = argv[5];
        const std::size_t limit = argc > 7 ? std::stoul(argv[7]) : 0;
        if (argc > 8) options.precision = argv[8];
        auto start = std::chrono::steady_clock::now();
        auto encoder = novelty::load_builtin_encoder(argv[1], options);
        const double load_seconds = seconds_since(start);
        std::vector<std::string> texts;
        for (const auto& r : novelty::read_query_records(argv[2])) {
            if (limit > 0 && texts.size() == limit) break;
            texts.push_back(novelty::embedding_text(r.title, r.text));
        }
        const auto tokenize = tokenizer_of(argv[1]);
        start = std::chrono::steady_clock::now();
        std::size_t tokens = 0;
        std::ofstream ids_out;
        if (argc > 6 && *argv[6]) ids_out.open(argv[6]);
        for (const auto& text : texts) {
            const auto ids = tokenize(text);
            tokens += ids.size();
            if (ids_out.is_open()) {
                for (std::size_t i = 0; i < ids.size(); ++i) ids_out << (i ? " " : "") << ids[i];
                ids_out << '\n';
            }
        }
        const double tokenize_seconds = seconds_since(start);
        start = std::chrono::steady_clock::now();
        const std::vector<float> vectors = encoder->embed(texts);
        const double seconds = seconds_since(start);
        novelty::write_npy(argv[3], novelty::DType::f32, texts.size(), encoder->dim(), vectors.data());
        double peak = -1;
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("VmHWM:", 0) == 0) peak = std::stod(line.substr(6)) / 1024.0;
        std::printf("{\"texts\": %zu, \"tokens\": %zu, \"device\": \"%s\", \"precision\": \"%s\", "
                    "\"load_seconds\": %.3f, \"tokenize_seconds_one_thread\": %.4f, \"seconds\": %.4f, "
                    "\"per_second\": %.2f, \"peak_rss_mb\": %.1f}\n",
                    texts.size(), tokens, encoder->device().c_str(), encoder->precision().c_str(), load_seconds,
                    tokenize_seconds, seconds, texts.size() / seconds, peak);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "encoder_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
