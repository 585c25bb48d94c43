// A deterministic test embedder: bag of words hashed into 64 dimensions, L2-normalised, so
// equal texts give equal vectors and shared words raise the cosine.
#pragma once

#include "novelty/encoder/embedder.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace novelty::test {

class HashEmbedder : public Embedder {
public:
    std::string name() const override { return "hash-64"; }
    std::size_t dim() const override { return 64; }
    std::string pooling() const override { return ""; }
    std::vector<float> embed(const std::vector<std::string>& texts) override {
        std::vector<float> out;
        for (const auto& t : texts) {
            std::vector<float> v(64, 0.0f);
            v[63] = 0.1f;
            std::istringstream words(t);
            for (std::string w; words >> w;) {
                std::uint64_t h = 1469598103934665603ULL;
                for (unsigned char c : w) h = (h ^ c) * 1099511628211ULL;
                v[h % 63] += 1.0f;
            }
            double n = 0;
            for (float x : v) n += x * x;
            for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
            out.insert(out.end(), v.begin(), v.end());
        }
        ++calls;
        return out;
    }
    int calls = 0;
};

}  // namespace novelty::test
