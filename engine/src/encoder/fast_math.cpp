#include "encoder/fast_math.hpp"

#include <cstdint>
#include <cstring>

namespace novelty::encoder {

namespace {

// The 8-wide vector helpers below are internal (inlined, never called across an ABI boundary),
// so GCC's note that their ABI depends on AVX being enabled does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float f8 __attribute__((vector_size(32)));
typedef std::int32_t i8 __attribute__((vector_size(32)));

inline f8 splat(float v) { return f8{v, v, v, v, v, v, v, v}; }

// The bits of a float vector as integers and back (memcpy: defined behaviour, compiled to nothing).
inline i8 bits_of(f8 v) {
    i8 bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
}
inline f8 float_of(i8 bits) {
    f8 v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}
inline i8 splat_i(std::int32_t v) { return i8{v, v, v, v, v, v, v, v}; }

inline f8 exp8(f8 x) {
    x = x < splat(-87.0f) ? splat(-87.0f) : x;
    x = x > splat(88.0f) ? splat(88.0f) : x;
    // n = round(x / ln 2) by the 1.5 * 2^23 trick; r = x - n ln 2 in [-ln2/2, ln2/2].
    const f8 magic = splat(12582912.0f);
    const f8 t = x * splat(1.44269504088896341f) + magic;
    const i8 n = bits_of(t) - bits_of(magic);
    const f8 nf = t - magic;
    const f8 r = x - nf * splat(0.693145751953125f) - nf * splat(1.428606765330187e-06f);
    // exp(r) by its Taylor series to degree 7 (|r| <= 0.347: truncation error below 1e-8).
    f8 p = splat(1.0f / 5040.0f);
    p = p * r + splat(1.0f / 720.0f);
    p = p * r + splat(1.0f / 120.0f);
    p = p * r + splat(1.0f / 24.0f);
    p = p * r + splat(1.0f / 6.0f);
    p = p * r + splat(0.5f);
    p = p * r + splat(1.0f);
    p = p * r + splat(1.0f);
    const i8 bits = (n + splat_i(127)) << 23;
    return p * float_of(bits);
}

inline f8 erf8(f8 x) {
    const i8 xi = bits_of(x);
    const i8 sign = xi & splat_i(static_cast<std::int32_t>(0x80000000u));
    const i8 ai = xi & splat_i(0x7fffffff);
    const f8 a = float_of(ai);
    const f8 t = splat(1.0f) / (splat(1.0f) + splat(0.3275911f) * a);
    f8 y = splat(1.061405429f);
    y = y * t - splat(1.453152027f);
    y = y * t + splat(1.421413741f);
    y = y * t - splat(0.284496736f);
    y = y * t + splat(0.254829592f);
    y = y * t;
    const f8 magnitude = splat(1.0f) - y * exp8(-(a * a));
    return float_of(bits_of(magnitude) | sign);
}

inline f8 load(const float* p) {
    f8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void store(float* p, f8 v) { std::memcpy(p, &v, sizeof v); }

// Applies f to x[0..n) in groups of 8; the tail goes through a padded copy.
template <typename F>
inline void map8(const float* x, float* out, std::size_t n, F f) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) store(out + i, f(load(x + i)));
    if (i < n) {
        float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::memcpy(tail, x + i, (n - i) * sizeof(float));
        store(tail, f(load(tail)));
        std::memcpy(out + i, tail, (n - i) * sizeof(float));
    }
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NOVELTY_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NOVELTY_VECTOR_CLONES
#endif

NOVELTY_VECTOR_CLONES
void exp_array(const float* x, float* out, std::size_t n) { map8(x, out, n, exp8); }

NOVELTY_VECTOR_CLONES
void gelu_in_place(float* x, std::size_t n) {
    map8(x, x, n, [](f8 v) { return splat(0.5f) * v * (splat(1.0f) + erf8(v * splat(0.70710678118654752f))); });
}

namespace {

// The largest of row[0..cols) (cols >= 1): 8 lanes, then the lanes and the tail (exact in any order).
inline float row_max(const float* row, std::size_t cols) {
    float max = row[0];
    std::size_t c = 0;
    if (cols >= 8) {
        f8 m = load(row);
        for (c = 8; c + 8 <= cols; c += 8) {
            const f8 v = load(row + c);
            m = v > m ? v : m;
        }
        for (int lane = 0; lane < 8; ++lane) max = m[lane] > max ? m[lane] : max;
    }
    for (; c < cols; ++c) max = row[c] > max ? row[c] : max;
    return max;
}

// row[c] = exp(row[c] - max) for c < cols; returns their sum, added in 8 lanes (lane l holds
// columns l, l + 8, ...), the lanes then in order 0..7, then the tail columns in order.
inline float exp_and_sum(float* row, std::size_t cols, float max) {
    const f8 m = splat(max);
    f8 lanes = splat(0.0f);
    std::size_t c = 0;
    for (; c + 8 <= cols; c += 8) {
        const f8 e = exp8(load(row + c) - m);
        store(row + c, e);
        lanes += e;
    }
    float sum = 0.0f;
    for (int lane = 0; lane < 8; ++lane) sum += lanes[lane];
    if (c < cols) {
        float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::memcpy(tail, row + c, (cols - c) * sizeof(float));
        store(tail, exp8(load(tail) - m));
        for (std::size_t t = 0; t < cols - c; ++t) sum += tail[t];
        std::memcpy(row + c, tail, (cols - c) * sizeof(float));
    }
    return sum;
}

}  // namespace

NOVELTY_VECTOR_CLONES
void softmax_rows(float* x, std::size_t rows, std::size_t cols) {
    if (cols == 0) return;
    for (std::size_t r = 0; r < rows; ++r) {
        float* row = x + r * cols;
        const float inv = 1.0f / exp_and_sum(row, cols, row_max(row, cols));
        map8(row, row, cols, [&](f8 v) { return v * splat(inv); });
    }
}

}  // namespace novelty::encoder
