// SplitMix64, the generator of the bootstrap: a small generator whose output is fixed by its
// definition on every platform (internal to engine/src/scoring).
#pragma once

#include <cstdint>
#include <limits>

namespace novelty::detail {

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, n), n > 0, without modulo bias (rejection).
    std::uint64_t below(std::uint64_t n) {
        const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
        std::uint64_t x;
        do x = next();
        while (x >= limit);
        return x % n;
    }

private:
    std::uint64_t state_;
};

}  // namespace novelty::detail
