// The emulated device's host twins (engine/src/device/emulated) against the kernels they stand
// for, on a card: the same inputs through dev::cuda_device() and dev::emulated_device() must
// give the card's bits where docs/cuda.md says the twin reproduces the card's arithmetic (warp
// and block sums, masks, placement, conversions, row norms, normalisation), the same kept set for
// the threshold filter, and close values for the encoder's kernels (which use exact exp and 1/sqrt
// where the card uses __expf and rsqrtf). Skipped without a real device, so it runs only on a card.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "device/device.hpp"
#include "novelty/search/devices.hpp"
#include "novelty/util/half.hpp"
#include "search_reference.hpp"

namespace novelty {
namespace {

using dev::Copy;
using dev::Element;

/// The real device when this build has one and a card is present; null otherwise.
dev::Device* real_device() {
    if (!cuda_compiled()) return nullptr;
    dev::Device& device = dev::cuda_device();
    return device.count() > 0 ? &device : nullptr;
}

/// A host array copied into a fresh allocation of `device` (released by the test's end).
struct Upload {
    Upload(dev::Device& d, const void* data, std::size_t bytes) : device(d), ptr(d.allocate(bytes)), size(bytes) {
        d.copy(ptr, data, bytes, Copy::host_to_device, nullptr);
    }
    ~Upload() { device.release(ptr); }
    template <typename T>
    std::vector<T> back() const {
        std::vector<T> out(size / sizeof(T));
        device.copy(out.data(), ptr, size, Copy::device_to_host, nullptr);
        device.synchronize(static_cast<dev::Stream>(nullptr));
        return out;
    }
    dev::Device& device;
    void* ptr;
    std::size_t size;
};

class EmulatorTwin : public ::testing::Test {
protected:
    void SetUp() override {
        card = real_device();
        if (card == nullptr) GTEST_SKIP() << "no CUDA device: the twins are checked on a card";
    }
    dev::Device* card = nullptr;
    dev::Device& emulator = dev::emulated_device();
};

TEST_F(EmulatorTwin, CandidateDotsAndRowNormsAreTheCardsBits) {
    const std::size_t dim = 77, n_rows = 300, n_pairs = 600;
    const auto queries = test::random_unit_rows(4, dim, 5), rows = test::random_unit_rows(n_rows, dim, 6);
    std::vector<std::int64_t> pair_row(n_pairs);
    for (std::size_t p = 0; p < n_pairs; ++p) pair_row[p] = p % 11 == 0 ? -1 : static_cast<std::int64_t>((p * 7) % n_rows);
    std::vector<std::vector<float>> got;
    for (dev::Device* d : {card, &emulator}) {
        Upload q(*d, queries.data(), queries.size() * 4), r(*d, rows.data(), rows.size() * 4);
        Upload pr(*d, pair_row.data(), n_pairs * 8);
        std::vector<float> out(n_pairs + 1, 0.0f);
        Upload o(*d, out.data(), out.size() * 4);
        d->candidate_dots(static_cast<const float*>(q.ptr), r.ptr, Element::f32, dim, nullptr, static_cast<const std::int64_t*>(pr.ptr),
                          n_pairs, static_cast<float*>(o.ptr), nullptr, n_pairs / 4);
        d->max_row_norm(r.ptr, Element::f32, n_rows, dim, static_cast<float*>(o.ptr) + n_pairs, nullptr);
        got.push_back(o.back<float>());
    }
    EXPECT_EQ(got[0], got[1]);
}

TEST_F(EmulatorTwin, NormalisedRowsAreTheCardsBits) {
    const std::size_t dim = 300, n_rows = 40;
    auto rows = test::random_unit_rows(n_rows, dim, 7);
    for (std::size_t c = 0; c < dim; ++c) rows[3 * dim + c] *= 1e-30f;  // scaled by the largest magnitude
    std::fill(rows.begin() + 5 * dim, rows.begin() + 6 * dim, 0.0f);
    rows[9 * dim + 4] = std::numeric_limits<float>::infinity();
    std::vector<std::vector<float>> got;
    std::vector<std::vector<int>> status;
    for (dev::Device* d : {card, &emulator}) {
        Upload in(*d, rows.data(), rows.size() * 4);
        std::vector<int> st(n_rows, -1);
        Upload s(*d, st.data(), st.size() * 4);
        d->normalize_rows(static_cast<const float*>(in.ptr), in.ptr, Element::f32, n_rows, dim, static_cast<int*>(s.ptr), nullptr);
        got.push_back(in.back<float>());
        status.push_back(s.back<int>());
    }
    EXPECT_EQ(status[0], status[1]);
    for (std::size_t i = 0; i < got[0].size(); ++i)
        if (!std::isnan(got[0][i])) ASSERT_EQ(got[0][i], got[1][i]) << i;
}

TEST_F(EmulatorTwin, ThresholdFilterKeepsTheSameEntries) {
    const std::size_t n_rows = 8, n_cols = 1000, k = 10, capacity = 64, ld = k + capacity;
    const auto tile = test::random_unit_rows(n_rows, n_cols, 12);
    std::vector<float> cand(n_rows * ld, -INFINITY);
    std::vector<std::int64_t> idx(n_rows * ld, -1);
    for (std::size_t r = 0; r < n_rows; ++r)
        for (std::size_t c = 0; c < k; ++c) cand[r * ld + c] = 0.02f + 0.001f * static_cast<float>(c + r);
    std::vector<std::set<std::int64_t>> kept[2];
    int which = 0;
    for (dev::Device* d : {card, &emulator}) {
        Upload t(*d, tile.data(), tile.size() * 4), v(*d, cand.data(), cand.size() * 4), i(*d, idx.data(), idx.size() * 8);
        int zero = 0;
        Upload overflow(*d, &zero, sizeof zero);
        d->filter_above(static_cast<const float*>(t.ptr), n_rows, n_cols, static_cast<float*>(v.ptr),
                        static_cast<std::int64_t*>(i.ptr), ld, k, capacity, 500, static_cast<int*>(overflow.ptr), nullptr);
        const auto rows_idx = i.back<std::int64_t>();
        for (std::size_t r = 0; r < n_rows; ++r)
            kept[which].emplace_back(rows_idx.begin() + r * ld + k, rows_idx.begin() + (r + 1) * ld);
        EXPECT_EQ(overflow.back<int>()[0], 0);
        ++which;
    }
    EXPECT_EQ(kept[0], kept[1]);
}

TEST_F(EmulatorTwin, EncoderKernelsAgreeWithinTheirIntrinsicsRounding) {
    const std::size_t n_tokens = 70, h = 64, heads = 2;
    const auto y = test::random_unit_rows(n_tokens, 3 * h, 21), x0 = test::random_unit_rows(n_tokens, h, 22);
    std::vector<float> gamma(h, 1.5f), beta(h, 0.25f);
    std::vector<std::int32_t> start(n_tokens), len(n_tokens);
    for (std::size_t t = 0; t < n_tokens; ++t) {
        start[t] = t < 30 ? 0 : 30;  // two sequences: tokens [0, 30) and [30, 70)
        len[t] = t < 30 ? 30 : 40;
    }
    std::vector<std::vector<float>> ln, attention;
    for (dev::Device* d : {card, &emulator}) {
        Upload yd(*d, y.data(), y.size() * 4), xd(*d, x0.data(), x0.size() * 4), g(*d, gamma.data(), h * 4),
            b(*d, beta.data(), h * 4), s(*d, start.data(), n_tokens * 4), l(*d, len.data(), n_tokens * 4);
        std::vector<std::uint16_t> half(n_tokens * h);
        Upload hd(*d, half.data(), half.size() * 2), ctx(*d, half.data(), half.size() * 2);
        d->add_layer_norm(static_cast<const float*>(yd.ptr), nullptr, static_cast<float*>(xd.ptr), n_tokens, h,
                          static_cast<const float*>(g.ptr), static_cast<const float*>(b.ptr), 1e-12f, hd.ptr, Element::f16, nullptr);
        ln.push_back(xd.back<float>());
        dev::AttentionArgs a;
        a.qkv_d = static_cast<const float*>(yd.ptr);
        a.seq_start_d = static_cast<const std::int32_t*>(s.ptr);
        a.seq_len_d = static_cast<const std::int32_t*>(l.ptr);
        a.n_tokens = n_tokens;
        a.h = h;
        a.heads = heads;
        a.ctx_d = ctx.ptr;
        a.type = Element::f16;
        d->attention(a, false, nullptr);
        std::vector<float> values;
        for (std::uint16_t bits : ctx.back<std::uint16_t>()) values.push_back(half_to_float(bits));
        attention.push_back(values);
    }
    for (std::size_t i = 0; i < ln[0].size(); ++i) ASSERT_NEAR(ln[0][i], ln[1][i], 1e-5f) << i;
    for (std::size_t i = 0; i < attention[0].size(); ++i) ASSERT_NEAR(attention[0][i], attention[1][i], 2e-3f) << i;
}

}  // namespace
}  // namespace novelty
