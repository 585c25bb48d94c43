// The emulated device itself (engine/src/device/emulated): its memory limit and pointer checks,
// copies, the selector's tie rule, the similarity GEMM's fixed-order sums, and the shared kernel
// bodies against plain reference loops. The CUDA backend's and encoder's behaviour on it is
// tested by tests/gpu (run on it in CI) and the conformance suite's emu-* cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "device/emulated/emulated_device.hpp"
#include "novelty/util/error.hpp"
#include "search/exact_rescore.hpp"
#include "search_reference.hpp"

namespace novelty {
namespace {

using dev::Copy;
using dev::Element;

TEST(EmulatedDevice, RefusesAllocationsBeyondItsMemoryAndFreesWhatItReleases) {
    dev::emulated::EmulatedDevice device(std::size_t{1} << 20);
    std::size_t free_bytes = 0, total = 0;
    device.memory_info(free_bytes, total);
    EXPECT_EQ(total, std::size_t{1} << 20);
    void* a = device.allocate(700 << 10);
    try {
        device.allocate(400 << 10);
        ADD_FAILURE() << "an allocation beyond the limit was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("NOVELTY_EMULATED_DEVICE_MIB (now 1)"), std::string::npos) << e.what();
    }
    device.release(a);
    void* b = device.allocate(400 << 10);
    device.memory_info(free_bytes, total);
    EXPECT_EQ(free_bytes, total - (400 << 10));
    device.release(b);
}

TEST(EmulatedDevice, RefusesHostPointersAndRangesPastAnAllocation) {
    dev::emulated::EmulatedDevice device(std::size_t{1} << 20);
    auto* buffer = static_cast<float*>(device.allocate(16 * sizeof(float)));
    std::vector<float> host(32, 1.0f);
    dev::Stream stream = device.make_stream();
    device.copy(buffer, host.data(), 16 * sizeof(float), Copy::host_to_device, stream);
    EXPECT_THROW(device.copy(buffer, host.data(), 17 * sizeof(float), Copy::host_to_device, stream), Error);
    EXPECT_THROW(device.copy(host.data(), host.data() + 16, 4, Copy::host_to_device, stream), Error);
    EXPECT_THROW(device.fill_bytes(buffer + 8, 0, 9 * sizeof(float), stream), Error);
    std::vector<float> back(16);
    device.copy(back.data(), buffer, 16 * sizeof(float), Copy::device_to_host, stream);
    EXPECT_EQ(back, std::vector<float>(16, 1.0f));
    EXPECT_THROW(device.set_current(1), UsageError);
    device.destroy(stream);
    device.release(buffer);
}

TEST(EmulatedDevice, SelectorKeepsTheLargestAndBreaksTiesByTheLowerPayload) {
    dev::emulated::EmulatedDevice device(std::size_t{1} << 20);
    const std::vector<float> vals = {0.5f, 0.9f, 0.5f, -INFINITY, 0.5f, 0.1f};
    const std::vector<std::int64_t> payload = {7, 3, 2, -1, 9, 4};
    auto* vals_d = static_cast<float*>(device.allocate(vals.size() * sizeof(float)));
    auto* idx_d = static_cast<std::int64_t*>(device.allocate(payload.size() * sizeof(std::int64_t)));
    auto* out_v = static_cast<float*>(device.allocate(3 * sizeof(float)));
    auto* out_i = static_cast<std::int64_t*>(device.allocate(3 * sizeof(std::int64_t)));
    std::memcpy(vals_d, vals.data(), vals.size() * sizeof(float));
    std::memcpy(idx_d, payload.data(), payload.size() * sizeof(std::int64_t));
    // The three kept, best last (the selector promises no order).
    device.make_selector(0)->largest(vals_d, idx_d, 1, 6, 3, out_v, out_i, nullptr);
    EXPECT_EQ(std::vector<std::int64_t>(out_i, out_i + 3), (std::vector<std::int64_t>{7, 2, 3}));
    device.make_selector(0)->largest(vals_d, nullptr, 1, 6, 3, out_v, out_i, nullptr);  // payload: columns
    EXPECT_EQ(std::vector<std::int64_t>(out_i, out_i + 3), (std::vector<std::int64_t>{2, 0, 1}));
    for (void* p : {static_cast<void*>(vals_d), static_cast<void*>(idx_d), static_cast<void*>(out_v), static_cast<void*>(out_i)})
        device.release(p);
}

TEST(EmulatedDevice, SimilarityTilesAreTheFixedOrderDotWhereverAnEntryFalls) {
    dev::emulated::EmulatedDevice device(std::size_t{64} << 20);
    const std::size_t nq = 5, nr = 37, dim = 45, ld = 40;
    const auto q = test::random_unit_rows(nq, dim, 3), r = test::random_unit_rows(nr, dim, 4);
    auto* q_d = static_cast<float*>(device.allocate(q.size() * sizeof(float)));
    auto* r_d = static_cast<float*>(device.allocate(r.size() * sizeof(float)));
    auto* s_d = static_cast<float*>(device.allocate(nq * ld * sizeof(float)));
    std::memcpy(q_d, q.data(), q.size() * sizeof(float));
    std::memcpy(r_d, r.data(), r.size() * sizeof(float));
    auto blas = device.make_blas();
    blas->similarity(nullptr, Element::f32, q_d, nq, r_d, nr, dim, s_d, ld, Element::f32);
    for (std::size_t i = 0; i < nq; ++i)
        for (std::size_t j = 0; j < nr; ++j)
            EXPECT_EQ(s_d[i * ld + j], exact_dot(q.data() + i * dim, r.data() + j * dim, dim)) << i << " " << j;
    // A sub-tile (other rows first) gives the same bits for the same pair.
    blas->similarity(nullptr, Element::f32, q_d + dim, 2, r_d + 5 * dim, 7, dim, s_d, 7, Element::f32);
    EXPECT_EQ(s_d[1 * 7 + 3], exact_dot(q.data() + 2 * dim, r.data() + 8 * dim, dim));
    // The output tile must fit its buffer.
    EXPECT_THROW(blas->similarity(nullptr, Element::f32, q_d, nq, r_d, nr, dim, s_d, ld + 1, Element::f32), Error);
    for (void* p : {static_cast<void*>(q_d), static_cast<void*>(r_d), static_cast<void*>(s_d)}) device.release(p);
}

TEST(EmulatedDevice, WarpDotsAreTheButterflyOfLaneSums) {
    // candidate_dots: lane l sums elements l, l + 32, ... with fused multiply-adds; the warp adds
    // the 32 lane sums by an xor butterfly. Checked against that order written out plainly.
    dev::emulated::EmulatedDevice device(std::size_t{16} << 20);
    const std::size_t dim = 100, n = 6;
    const auto q = test::random_unit_rows(1, dim, 8), rows = test::random_unit_rows(n, dim, 9);
    auto* q_d = static_cast<float*>(device.allocate(dim * sizeof(float)));
    auto* r_d = static_cast<float*>(device.allocate(rows.size() * sizeof(float)));
    auto* pr_d = static_cast<std::int64_t*>(device.allocate(n * sizeof(std::int64_t)));
    auto* out_d = static_cast<float*>(device.allocate(n * sizeof(float)));
    std::memcpy(q_d, q.data(), dim * sizeof(float));
    std::memcpy(r_d, rows.data(), rows.size() * sizeof(float));
    for (std::size_t p = 0; p < n; ++p) pr_d[p] = p == 2 ? -1 : static_cast<std::int64_t>(n - 1 - p);
    device.candidate_dots(q_d, r_d, Element::f32, dim, nullptr, pr_d, n, out_d, nullptr, n);
    for (std::size_t p = 0; p < n; ++p) {
        if (pr_d[p] < 0) {
            EXPECT_EQ(out_d[p], -INFINITY);
            continue;
        }
        float lane[32];
        for (int l = 0; l < 32; ++l) {
            lane[l] = 0.0f;
            for (std::size_t c = l; c < dim; c += 32) lane[l] = std::fma(q[c], rows[pr_d[p] * dim + c], lane[l]);
        }
        for (int offset = 16; offset > 0; offset /= 2) {
            float next[32];
            for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ offset];
            std::memcpy(lane, next, sizeof lane);
        }
        EXPECT_EQ(out_d[p], lane[0]) << p;
    }
    for (void* p : {static_cast<void*>(q_d), static_cast<void*>(r_d), static_cast<void*>(pr_d), static_cast<void*>(out_d)})
        device.release(p);
}

TEST(EmulatedDevice, SelectedByNameOrByTheEnvironment) {
    EXPECT_TRUE(dev::select_device(true).emulated());
    EXPECT_EQ(dev::emulated_device().name(), "cuda-emulated");
    EXPECT_EQ(dev::emulated_device_list().size(), 1u);
}

}  // namespace
}  // namespace novelty
