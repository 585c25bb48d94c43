#include "search/cpu/scan_at_least.hpp"

#include <cstring>

namespace novelty {

namespace {

typedef float float8 __attribute__((vector_size(32)));
typedef std::int32_t int8v __attribute__((vector_size(32)));

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::size_t scan_at_least(const float* values, std::size_t n, float threshold, std::uint32_t* out) {
    std::size_t count = 0;
    std::size_t j = 0;
    const float8 limit = {threshold, threshold, threshold, threshold, threshold, threshold, threshold, threshold};
    // 16 at a time: most groups have no entry at or above the threshold and cost two compares.
    for (; j + 16 <= n; j += 16) {
        float8 a, b;
        std::memcpy(&a, values + j, sizeof a);
        std::memcpy(&b, values + j + 8, sizeof b);
        const int8v above = (a >= limit) | (b >= limit);
        std::uint64_t lanes[4];
        std::memcpy(lanes, &above, sizeof lanes);
        if ((lanes[0] | lanes[1] | lanes[2] | lanes[3]) == 0) continue;
        for (std::size_t i = j; i < j + 16; ++i)
            if (values[i] >= threshold) out[count++] = static_cast<std::uint32_t>(i);
    }
    for (; j < n; ++j)
        if (values[j] >= threshold) out[count++] = static_cast<std::uint32_t>(j);
    return count;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
std::size_t scan_at_least_each(const float* values, const float* thresholds, std::size_t n, std::uint32_t* out) {
    std::size_t count = 0;
    std::size_t j = 0;
    for (; j + 16 <= n; j += 16) {
        float8 a, b, ta, tb;
        std::memcpy(&a, values + j, sizeof a);
        std::memcpy(&b, values + j + 8, sizeof b);
        std::memcpy(&ta, thresholds + j, sizeof ta);
        std::memcpy(&tb, thresholds + j + 8, sizeof tb);
        const int8v above = (a >= ta) | (b >= tb);
        std::uint64_t lanes[4];
        std::memcpy(lanes, &above, sizeof lanes);
        if ((lanes[0] | lanes[1] | lanes[2] | lanes[3]) == 0) continue;
        for (std::size_t i = j; i < j + 16; ++i)
            if (values[i] >= thresholds[i]) out[count++] = static_cast<std::uint32_t>(i);
    }
    for (; j < n; ++j)
        if (values[j] >= thresholds[j]) out[count++] = static_cast<std::uint32_t>(j);
    return count;
}

}  // namespace novelty
