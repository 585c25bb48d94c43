// parallel_for_blocks and parallel_copy (engine/src/util/parallel_for.hpp).
#include "util/parallel_for.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace novelty {
namespace {

TEST(ParallelFor, RunsEveryBlockOnceAndRethrowsAFailure) {
    std::vector<std::atomic<int>> runs(1000);
    parallel_for_blocks(runs.size(), 0, [&](std::size_t block) { runs[block].fetch_add(1); });
    for (const auto& count : runs) ASSERT_EQ(count.load(), 1);
    EXPECT_THROW(parallel_for_blocks(100, 0,
                                     [&](std::size_t block) {
                                         if (block == 37) throw std::runtime_error("block 37");
                                     }),
                 std::runtime_error);
}

TEST(ParallelCopy, CopiesEveryByteOfSmallAndSplitSizes) {
    const std::size_t mib = std::size_t{1} << 20;
    // 0 and 1 byte, the largest single-thread copy, one byte past it, and pieces with a ragged end.
    for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, 8 * mib, 8 * mib + 1, 13 * mib + 7}) {
        std::vector<unsigned char> source(bytes + 2), target(bytes + 2, 0xAB);
        for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
        // Offset by one byte: neither range is aligned.
        parallel_copy(target.data() + 1, source.data() + 1, bytes);
        ASSERT_EQ(target[0], 0xAB) << bytes;
        ASSERT_EQ(target[bytes + 1], 0xAB) << "wrote past the end for " << bytes;
        for (std::size_t i = 1; i <= bytes; ++i) ASSERT_EQ(target[i], source[i]) << "byte " << i << " of " << bytes;
    }
}

}  // namespace
}  // namespace novelty
