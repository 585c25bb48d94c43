// Times the built-in encoder in-process, for bench/encoder_vs_sentence_transformers.py.
//   encoder_bench MODEL_DIR RECORDS.jsonl OUT.npy [threads]
// Prints one JSON object (texts, seconds, texts per second, peak RSS) and writes the embeddings.
#include "novelty/io/npy.hpp"
#include "novelty/io/query_records.hpp"
#include "novelty/encoder/text_encoder.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: encoder_bench MODEL_DIR RECORDS.jsonl OUT.npy [threads]\n");
        return 2;
    }
    try {
        novelty::EncoderOptions options;
        if (argc > 4) options.threads = std::stoul(argv[4]);
        auto encoder = novelty::load_builtin_encoder(argv[1], options);
        std::vector<std::string> texts;
        for (const auto& r : novelty::read_query_records(argv[2])) texts.push_back(novelty::embedding_text(r.title, r.text));
        const auto start = std::chrono::steady_clock::now();
        const std::vector<float> vectors = encoder->embed(texts);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        novelty::write_npy(argv[3], novelty::DType::f32, texts.size(), encoder->dim(), vectors.data());
        double peak = -1;
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("VmHWM:", 0) == 0) peak = std::stod(line.substr(6)) / 1024.0;
        std::printf("{\"texts\": %zu, \"seconds\": %.4f, \"per_second\": %.2f, \"peak_rss_mb\": %.1f}\n", texts.size(),
                    seconds, texts.size() / seconds, peak);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "encoder_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
