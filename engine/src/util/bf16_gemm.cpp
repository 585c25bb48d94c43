#include "util/bf16_gemm.hpp"

#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "util/gemm_kernels.hpp"

#include <cstring>

#include "util/packed_gemm_kernel.inc"

namespace novelty {

namespace {

float float_of_bits(std::uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

// to_bf16 without branches, so that the loops over rows below vectorize.
inline std::uint32_t bf16_bits(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;  // to nearest, ties to even
    const std::uint32_t quiet_nan = (bits >> 16) | 0x0040u;
    return (bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
}

std::uint32_t pack_pair(const float* row, std::size_t in, std::size_t p) {
    const std::uint32_t lo = bf16_bits(row[2 * p]);
    const std::uint32_t hi = 2 * p + 1 < in ? bf16_bits(row[2 * p + 1]) : 0u;
    return lo | hi << 16;
}

// vdpbf16ps in plain C++: the product of two bf16 values is exact in float32, so each step is
// one rounding, as in the instruction.
struct PortableOps {
    struct acc {
        float v[16];
    };
    using words = const std::uint32_t*;
    static constexpr int block_rows = 8;  // as the AVX-512 kernel (the same order of sums)
    float* y;
    std::size_t ldy;
    const float* bias;
    acc zero() const { return acc{}; }
    words load(const std::uint32_t* p) const { return p; }
    acc dot(acc sum, std::uint32_t a, words b) const {
        const float a_lo = float_of_bits(a << 16), a_hi = float_of_bits(a & 0xffff0000u);
        for (int i = 0; i < 16; ++i) {
            sum.v[i] += a_hi * float_of_bits(b[i] & 0xffff0000u);
            sum.v[i] += a_lo * float_of_bits(b[i] << 16);
        }
        return sum;
    }
    void store(std::size_t row, std::size_t col, const acc& sum, std::size_t count) const {
        float* dst = y + row * ldy + col;
        for (std::size_t i = 0; i < count; ++i) dst[i] = bias ? sum.v[i] + bias[col + i] : sum.v[i];
    }
};

}  // namespace

std::uint16_t to_bf16(float v) { return static_cast<std::uint16_t>(bf16_bits(v)); }

float from_bf16(std::uint16_t bits) { return float_of_bits(static_cast<std::uint32_t>(bits) << 16); }

Bf16Panels pack_bf16_panels(const float* w, std::size_t out, std::size_t in) {
    Bf16Panels p;
    p.out = out;
    p.in = in;
    p.pairs = (in + 1) / 2;
    p.panels = (out + bf16_panel_rows - 1) / bf16_panel_rows;
    p.words.assign(p.panels * p.pairs * bf16_panel_rows, 0u);
    pack_bf16_panel_rows(w, 0, out, in, p.words.data());
    return p;
}

void pack_bf16_panel_rows(const float* x, std::size_t first_row, std::size_t n, std::size_t in, std::uint32_t* words) {
    const std::size_t pairs = (in + 1) / 2;
    for (std::size_t t = 0; t < n; ++t) {
        const std::size_t row = first_row + t, panel = row / bf16_panel_rows, lane = row % bf16_panel_rows;
        std::uint32_t* dst = words + panel * pairs * bf16_panel_rows + lane;
        for (std::size_t pair = 0; pair < pairs; ++pair) dst[pair * bf16_panel_rows] = pack_pair(x + t * in, in, pair);
    }
}

void pack_bf16_rows(const float* x, std::size_t n, std::size_t in, std::uint32_t* xw) {
    const std::size_t pairs = (in + 1) / 2, full = in / 2;
    // A row's words hold its bf16 values in order, low half first: AVX-512 rounds whole rows of
    // 16 values at a time into them (the same bits), on the paths that run it.
    const bool wide = bf16_kernel_available() && bf16_kernel_runs();
    for (std::size_t r = 0; r < n; ++r) {
        const float* row = x + r * in;
        std::uint32_t* out = xw + r * pairs;
        std::size_t p = 0;
        if (wide) {
            const std::size_t done = bf16_round_avx512_raw(row, in / 16 * 16, reinterpret_cast<std::uint16_t*>(out));
            p = done / 2;
        }
        for (; p < full; ++p) out[p] = bf16_bits(row[2 * p]) | bf16_bits(row[2 * p + 1]) << 16;
        if (full < pairs) out[full] = bf16_bits(row[2 * full]);
    }
}

bool bf16_kernel_runs() {
    const CpuFeatures& f = cpu_features();
    return bf16_avx512_compiled() && f.avx512f && f.avx512bf16;
}

void bf16_gemm_avx512(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y) {
    if (!bf16_kernel_runs()) throw Error("bf16_gemm_avx512: this CPU (or this build) has no AVX512-BF16");
    bf16_gemm_avx512_raw(xw, n, w.words.data(), w.pairs, w.panels, w.out, bias, y);
}

void bf16_gemm_best(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y) {
    if (!bf16_kernel_runs()) throw Error("bf16_gemm_best: this CPU (or this build) has no AVX512-BF16");
    std::size_t done = 0;
    if (cpu_path() == CpuPath::amx && cpu_features().amx_bf16) {
        done = bf16_gemm_amx_raw(xw, n, w.words.data(), w.pairs, w.panels, w.out, y);
        if (bias) add_bias_avx512_raw(y, done, w.out, bias);
    }
    if (done < n) bf16_gemm_avx512_raw(xw + done * w.pairs, n - done, w.words.data(), w.pairs, w.panels, w.out, bias,
                                       y + done * w.out);
}

void bf16_gemm_portable(const std::uint32_t* xw, std::size_t n, const Bf16Panels& w, const float* bias, float* y) {
    PortableOps ops{y, w.out, bias};
    packed_gemm_with(ops, xw, n, w.words.data(), w.pairs, w.panels, w.out);
}

void bf16_gemm_panel_range(const std::uint32_t* xw, std::size_t n, const std::uint32_t* words, std::size_t pairs,
                           std::size_t panels, std::size_t out, float* y) {
    if (bf16_kernel_available() && bf16_kernel_runs()) {
        std::size_t done = 0;
        if (cpu_path() == CpuPath::amx && cpu_features().amx_bf16)
            done = bf16_gemm_amx_raw(xw, n, words, pairs, panels, out, y);
        if (done < n)
            bf16_gemm_avx512_raw(xw + done * pairs, n - done, words, pairs, panels, out, nullptr, y + done * out);
    } else {
        PortableOps ops{y, out, nullptr};
        packed_gemm_with(ops, xw, n, words, pairs, panels, out);
    }
}

}  // namespace novelty
