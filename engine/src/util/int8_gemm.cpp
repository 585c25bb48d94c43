#include "util/int8_gemm.hpp"

#include "novelty/util/cpu_path.hpp"
#include "novelty/util/error.hpp"
#include "util/gemm_kernels.hpp"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "util/packed_gemm_kernel.inc"

namespace novelty {

namespace {

constexpr std::size_t float32_slice = 1024;  // 127 * 127 * 1024 < 2^24: exact float32 partial sums

// The value of input i, multiplied by its factor when there are factors.
template <bool WithFactor>
inline float input_value(const float* v, const float* factor, std::size_t i) {
    if constexpr (WithFactor) return v[i] * factor[i];
    return v[i];
}

// Quantizes one row: with x[i] = v[i] (times factor[i] when WithFactor), q[i] = round(x[i] * 127 /
// max|x|), ties to even, stored as T(q[i] + offset); returns the scale max|x| / 127 (0, and every
// q = 0, for a row of zeros). Returns a negative value, and writes nothing, for a row holding a
// value that is not finite (the caller says which row). Two passes of simple loops that the
// compiler vectorizes.
template <bool WithFactor, class T>
float quantize_row(const float* v, const float* factor, std::size_t in, T* out, int offset) {
    // max |x| on the bits: for floats without their sign the integer order is the numeric one,
    // and infinities and NaNs lie above every finite value (an integer maximum vectorizes).
    std::uint32_t top = 0;
    for (std::size_t i = 0; i < in; ++i) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(input_value<WithFactor>(v, factor, i)) & 0x7fffffffu;
        top = bits > top ? bits : top;
    }
    if (top >= 0x7f800000u) return -1.0f;
    const float amax = std::bit_cast<float>(top);
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds |t| < 2^22 to an integer
    for (std::size_t i = 0; i < in; ++i) {
        const float t = input_value<WithFactor>(v, factor, i) * inv;
        const float r = std::clamp((t + round_magic) - round_magic, -127.0f, 127.0f);
        out[i] = static_cast<T>(static_cast<int>(r) + offset);
    }
    return amax / 127.0f;
}

template <class T>
float quantize_row(const float* v, const float* factor, std::size_t in, T* out, int offset) {
    return factor ? quantize_row<true>(v, factor, in, out, offset) : quantize_row<false>(v, factor, in, out, offset);
}

// One output: the exact integer sum scaled back and the bias added, in one rounding step after
// the scale's product (the kernel's vfmadd does the same).
inline float int8_output(std::int32_t sum, float x_scale, float w_scale, float bias) {
    return std::fma(static_cast<float>(sum), x_scale * w_scale, bias);
}

// Word p of a weight row for the vnni panels: byte b = q[4p + b] (0 past `in`).
std::uint32_t pack_quad(const std::int8_t* q, std::size_t in, std::size_t p) {
    std::uint32_t word = 0;
    for (std::size_t b = 0; b < 4 && 4 * p + b < in; ++b)
        word |= (static_cast<std::uint32_t>(q[4 * p + b]) & 0xffu) << (8 * b);
    return word;
}

// vpdpbusd in plain C++: per lane, the four unsigned x signed byte products added to an int32 sum.
struct PortableVnniOps {
    struct acc {
        std::int32_t v[16];
    };
    using words = const std::uint32_t*;
    static constexpr int block_rows = 8;  // as the AVX-512 kernel (the same order of blocks)
    const float* x_scale;
    const std::int32_t* row_sum;
    const float* w_scale;
    const float* bias;
    float* y;
    std::size_t ldy;
    acc zero() const { return acc{}; }
    words load(const std::uint32_t* p) const { return p; }
    acc dot(acc sum, std::uint32_t a, words b) const {
        for (int i = 0; i < 16; ++i)
            for (int k = 0; k < 4; ++k)
                sum.v[i] += static_cast<std::int32_t>((a >> (8 * k)) & 0xffu) *
                            static_cast<std::int8_t>((b[i] >> (8 * k)) & 0xffu);
        return sum;
    }
    void store(std::size_t row, std::size_t col, const acc& sum, std::size_t count) const {
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t c = col + i;
            y[row * ldy + c] = int8_output(sum.v[i] - 128 * row_sum[c], x_scale[row], w_scale[c], bias ? bias[c] : 0.0f);
        }
    }
};

void int8_gemm_float32(Int8Rows& x, const Int8Weights& w, const float* bias, float* y) {
    const std::size_t n = x.n, out = w.out, in = w.in;
    x.sums.assign(n * out, 0);
    x.partial.resize(n * out);
    for (std::size_t k0 = 0; k0 < in; k0 += float32_slice) {
        const std::size_t k = std::min(float32_slice, in - k0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(out),
                    static_cast<int>(k), 1.0f, x.values.data() + k0, static_cast<int>(in), w.values.data() + k0,
                    static_cast<int>(in), 0.0f, x.partial.data(), static_cast<int>(out));
        for (std::size_t i = 0; i < n * out; ++i) x.sums[i] += static_cast<std::int32_t>(x.partial[i]);
    }
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < out; ++c)
            y[r * out + c] = int8_output(x.sums[r * out + c], x.scale[r], w.scale[c], bias ? bias[c] : 0.0f);
}

// The products of x's words with the panels by the kernel of cpu_path(), else by the portable
// loop; every one gives the same bits (int8_gemm.hpp). AMX does whole tiles of 16 rows of x, the
// AVX-512 kernel the rows past them.
void int8_panels_product(const std::uint32_t* xw, const float* x_scale, std::size_t n, const std::uint32_t* words,
                         std::size_t quads, std::size_t panels, std::size_t out, const std::int32_t* row_sum,
                         const float* w_scale, const float* bias, float* y) {
    switch (cpu_path()) {
        case CpuPath::amx: {
            const std::size_t done =
                int8_gemm_amx_raw(xw, x_scale, n, words, quads, panels, out, row_sum, w_scale, bias, y);
            if (done < n)
                int8_gemm_vnni_raw(xw + done * quads, x_scale + done, n - done, words, quads, panels, out, row_sum,
                                   w_scale, bias, y + done * out);
            return;
        }
        case CpuPath::avx512:
            return int8_gemm_vnni_raw(xw, x_scale, n, words, quads, panels, out, row_sum, w_scale, bias, y);
        case CpuPath::avxvnni:
            return int8_gemm_avxvnni_raw(xw, x_scale, n, words, quads, panels, out, row_sum, w_scale, bias, y);
        case CpuPath::avx2:
            return int8_gemm_avx2_raw(xw, x_scale, n, words, quads, panels, out, row_sum, w_scale, bias, y);
        case CpuPath::f32: break;
    }
    PortableVnniOps ops{x_scale, row_sum, w_scale, bias, y, out};
    packed_gemm_with(ops, xw, n, words, quads, panels, out);
}

void check_operands(const Int8Rows& x, const Int8Weights& w) {
    if (x.path != w.path) throw Error("int8_gemm: the activations and the weights are laid out for different paths");
    if (x.in != w.in)
        throw Error("int8_gemm: activations of " + std::to_string(x.in) + " inputs against a weight of " +
                    std::to_string(w.in));
}

}  // namespace

Int8Path best_int8_path() { return int8_kernel_available() ? Int8Path::vnni : Int8Path::float32; }

Int8Weights quantize_int8_weights(const float* w, std::size_t out, std::size_t in, Int8Path path,
                                  const float* input_factor) {
    if (path == Int8Path::vnni && !int8_kernel_available())
        throw Error(std::string("int8 products by a kernel were asked for on the CPU path ") + cpu_path_name(cpu_path()) +
                    ", which has none (AVX2 or better; novelty/util/cpu_path.hpp)");
    Int8Weights q;
    q.path = path;
    q.out = out;
    q.in = in;
    q.quads = (in + 3) / 4;
    q.panels = (out + 15) / 16;
    q.scale.resize(out);
    q.row_sum.resize(out);
    std::vector<std::int8_t> row(in);
    std::vector<float> divided(input_factor ? in : 0);
    if (input_factor) q.input_factor.assign(input_factor, input_factor + in);
    if (path == Int8Path::vnni) q.words.assign(q.panels * q.quads * 16, 0u);
    else q.values.resize(out * in);
    for (std::size_t c = 0; c < out; ++c) {
        const float* values = w + c * in;
        if (input_factor) {
            for (std::size_t i = 0; i < in; ++i) divided[i] = values[i] / input_factor[i];
            values = divided.data();
        }
        q.scale[c] = quantize_row(values, nullptr, in, row.data(), 0);
        if (q.scale[c] < 0.0f)
            throw Error("int8 quantization: row " + std::to_string(c) + " of a " + std::to_string(out) + " x " +
                        std::to_string(in) + " weight holds a value that is not finite (inf or NaN): the model's "
                        "weights are damaged; re-download the model directory");
        std::int32_t sum = 0;
        for (std::size_t i = 0; i < in; ++i) sum += row[i];
        q.row_sum[c] = sum;
        if (path == Int8Path::float32) {
            std::copy(row.begin(), row.end(), q.values.begin() + static_cast<std::ptrdiff_t>(c * in));
            continue;
        }
        std::uint32_t* dst = q.words.data() + (c / 16) * q.quads * 16 + c % 16;
        for (std::size_t p = 0; p < q.quads; ++p) dst[p * 16] = pack_quad(row.data(), in, p);
    }
    return q;
}

void quantize_int8_rows(const float* x, std::size_t n, std::size_t in, Int8Path path, Int8Rows& rows,
                        const float* input_factor) {
    static_assert(std::endian::native == std::endian::little, "the vnni rows are written as bytes of their words");
    rows.path = path;
    rows.n = n;
    rows.in = in;
    rows.scale.resize(n);
    const std::size_t quads = (in + 3) / 4;
    if (path == Int8Path::vnni) rows.words.resize(n * quads);
    else rows.values.resize(n * in);
    for (std::size_t r = 0; r < n; ++r) {
        if (path == Int8Path::float32) {
            rows.scale[r] = quantize_row(x + r * in, input_factor, in, rows.values.data() + r * in, 0);
            continue;
        }
        // Byte b of word p is input 4p + b (little-endian); past `in`, q = 0 (byte 128).
        auto* bytes = reinterpret_cast<std::uint8_t*>(rows.words.data() + r * quads);
        rows.scale[r] = quantize_row(x + r * in, input_factor, in, bytes, 128);
        std::fill(bytes + in, bytes + 4 * quads, std::uint8_t{128});
    }
    for (std::size_t r = 0; r < n; ++r)
        if (rows.scale[r] < 0.0f)
            throw Error("int8 quantization: the input of token " + std::to_string(r) + " to a linear layer holds a "
                        "value that is not finite (inf or NaN): the model overflows on this text; --precision f32 "
                        "or bf16 shows whether it does in float32 too");
}

void int8_gemm(Int8Rows& x, const Int8Weights& w, const float* bias, float* y) {
    check_operands(x, w);
    if (x.n == 0 || w.out == 0) return;
    if (w.path == Int8Path::float32) return int8_gemm_float32(x, w, bias, y);
    int8_panels_product(x.words.data(), x.scale.data(), x.n, w.words.data(), w.quads, w.panels, w.out,
                        w.row_sum.data(), w.scale.data(), bias, y);
}

void int8_gemm_vnni_portable(const Int8Rows& x, const Int8Weights& w, const float* bias, float* y) {
    check_operands(x, w);
    if (w.path != Int8Path::vnni) throw Error("int8_gemm_vnni_portable: the operands are not laid out for vnni");
    PortableVnniOps ops{x.scale.data(), w.row_sum.data(), w.scale.data(), bias, y, w.out};
    packed_gemm_with(ops, x.words.data(), x.n, w.words.data(), w.quads, w.panels, w.out);
}

float quantize_int8_values(const float* v, std::size_t in, std::int8_t* q) { return quantize_row(v, nullptr, in, q, 0); }

void int8_gemm_panel_range(const Int8Rows& x, const std::uint32_t* words, std::size_t quads, std::size_t panels,
                           std::size_t out, const std::int32_t* row_sum, const float* w_scale, float* y) {
    if (x.path != Int8Path::vnni || (x.in + 3) / 4 != quads)
        throw Error("int8_gemm_panel_range: the activations are not laid out for these panels");
    if (x.n == 0 || out == 0) return;
    int8_panels_product(x.words.data(), x.scale.data(), x.n, words, quads, panels, out, row_sum, w_scale, nullptr, y);
}

}  // namespace novelty
