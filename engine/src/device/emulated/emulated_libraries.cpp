// The emulated device's GEMMs and its top-k selector (the CPU's exact rule: similarity
// descending, then lower payload). Operands are widened exactly to float32 (a product of two
// 16-bit values is exact in float32, so only the order of the sums differs from cuBLAS). A
// similarity tile's entries are the engine's fixed-order exact_dot (search/exact_rescore.hpp),
// so an entry does not depend on where it falls in a tile (a BLAS kernel's can) and a float32
// corpus gives the CPU backend's similarities bit for bit; the linear layers use the CPU BLAS.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "device/emulated/emulated_device.hpp"
#include "novelty/util/error.hpp"
#include "search/exact_rescore.hpp"
#include "util/parallel_for.hpp"

namespace novelty::dev::emulated {

namespace {

std::size_t bytes_of(Element type, std::size_t n) { return n * static_cast<std::size_t>(kernels::element_bytes(type)); }

/// rows x cols values of `type` (row-major, leading dimension cols) as float32.
std::vector<float> widened(const void* values, Element type, std::size_t rows, std::size_t cols) {
    std::vector<float> out(rows * cols);
    load_values(values, type, out.size(), out.data());
    return out;
}

class EmulatedBlas final : public Blas {
public:
    explicit EmulatedBlas(const EmulatedDevice& device) : device_(device) {}

    void similarity(Stream, Element type, const void* queries_d, std::int64_t n_queries, const void* rows_d,
                    std::int64_t n_rows, std::int64_t dim, void* sims_d, std::int64_t ld, Element out_type) override {
        if (out_type != Element::f32 && out_type != type)
            throw Error("similarity_gemm: the output is float32 or the inputs' own 16-bit type");
        if (out_type == Element::bf16) throw Error("similarity_gemm: bfloat16 tiles are not supported");
        if (n_queries == 0 || n_rows == 0) return;
        const auto nq = static_cast<std::size_t>(n_queries), nr = static_cast<std::size_t>(n_rows),
                   d = static_cast<std::size_t>(dim), out_ld = static_cast<std::size_t>(ld);
        if (out_ld < nr) throw Error("similarity_gemm: the leading dimension is below the row count");
        device_.check(queries_d, bytes_of(type, nq * d), "the GEMM's queries");
        device_.check(rows_d, bytes_of(type, nr * d), "the GEMM's rows");
        device_.check(sims_d, bytes_of(out_type, (nq - 1) * out_ld + nr), "the GEMM's output tile");
        const std::vector<float> q = widened(queries_d, type, nq, d), r = widened(rows_d, type, nr, d);
        parallel_for_blocks(nq, 0, [&](std::size_t i) {
            for (std::size_t j = 0; j < nr; ++j)
                store_value(sims_d, out_type, i * out_ld + j, exact_dot(q.data() + i * d, r.data() + j * d, d));
        });
    }

    bool linear(Stream, Element type, const void* w_d, const float* bias_d, const void* x_d, std::size_t n_tokens,
                std::size_t in, std::size_t out, float* y_d) override {
        if (n_tokens == 0) return true;
        device_.check(w_d, bytes_of(type, out * in), "the linear layer's weights");
        device_.check(x_d, bytes_of(type, n_tokens * in), "the linear layer's input");
        device_.check(y_d, n_tokens * out * sizeof(float), "the linear layer's output");
        const std::vector<float> w = widened(w_d, type, out, in), x = widened(x_d, type, n_tokens, in);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n_tokens), static_cast<int>(out),
                    static_cast<int>(in), 1.0f, x.data(), static_cast<int>(in), w.data(), static_cast<int>(in), 0.0f,
                    y_d, static_cast<int>(out));
        if (bias_d == nullptr) return true;
        // The epilogue adds the bias, as cuBLASLt's BIAS epilogue does on a card.
        device_.check(bias_d, out * sizeof(float), "the linear layer's bias");
        for (std::size_t t = 0; t < n_tokens; ++t)
            for (std::size_t c = 0; c < out; ++c) y_d[t * out + c] += bias_d[c];
        return true;
    }

private:
    const EmulatedDevice& device_;
};

/// Whether (a, payload_a) ranks before (b, payload_b): higher value, then lower payload; NaN last.
bool ranks_before(float a, std::int64_t payload_a, float b, std::int64_t payload_b) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    if (a != b) return a > b;
    return payload_a < payload_b;
}

class EmulatedSelector final : public Selector {
public:
    explicit EmulatedSelector(const EmulatedDevice& device) : device_(device) {}

    void largest(const float* in_vals_d, const std::int64_t* in_idx_d, std::int64_t n_rows, std::int64_t len,
                 std::int64_t k, float* out_vals_d, std::int64_t* out_idx_d, Stream) override {
        if (n_rows <= 0) return;
        if (k < 1 || k > len) throw Error("select_k: k must be in [1, len]");
        const auto rows = static_cast<std::size_t>(n_rows), width = static_cast<std::size_t>(len),
                   kk = static_cast<std::size_t>(k);
        device_.check(in_vals_d, rows * width * sizeof(float), "select_k's input values");
        if (in_idx_d != nullptr) device_.check(in_idx_d, rows * width * sizeof(std::int64_t), "select_k's payload");
        device_.check(out_vals_d, rows * kk * sizeof(float), "select_k's output values");
        device_.check(out_idx_d, rows * kk * sizeof(std::int64_t), "select_k's output payload");
        std::vector<std::size_t> order(width);
        for (std::size_t r = 0; r < rows; ++r) {
            const float* vals = in_vals_d + r * width;
            auto payload = [&](std::size_t c) {
                return in_idx_d != nullptr ? in_idx_d[r * width + c] : static_cast<std::int64_t>(c);
            };
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kk), order.end(),
                              [&](std::size_t a, std::size_t b) { return ranks_before(vals[a], payload(a), vals[b], payload(b)); });
            // RAFT promises no order: the k kept are written best last, so that glue relying on
            // an order fails here as it could on a card.
            for (std::size_t j = 0; j < kk; ++j) {
                out_vals_d[r * kk + j] = vals[order[kk - 1 - j]];
                out_idx_d[r * kk + j] = payload(order[kk - 1 - j]);
            }
        }
    }

private:
    const EmulatedDevice& device_;
};

}  // namespace

std::unique_ptr<Blas> EmulatedDevice::make_blas() { return std::make_unique<EmulatedBlas>(*this); }

std::unique_ptr<Selector> EmulatedDevice::make_selector(std::size_t) { return std::make_unique<EmulatedSelector>(*this); }

}  // namespace novelty::dev::emulated
