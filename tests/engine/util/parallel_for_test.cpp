// parallel_for_blocks and parallel_copy (engine/src/util/parallel_for.hpp).
#include "util/parallel_for.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
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

// A progress callback that throws stops the work and is rethrown once every thread has ended (a
// thread left joinable would end the process). Blocks from 10 on wait until the callback has
// thrown, so it is called while work remains, and then take 20 ms each: the 990 of them would take
// about 10 s on 2 threads, far longer than the calling thread needs to stop the work even on a
// loaded machine, so a stop that does not happen shows as every block having run. (Counting the
// blocks that start in the moment between the callback's throw and the stop would depend on how
// the threads are scheduled.)
TEST(ParallelFor, AProgressCallbackThatThrowsStopsTheWorkAndIsRethrown) {
    std::atomic<bool> thrown{false};
    std::atomic<int> started{0};
    const auto fn = [&](std::size_t block) {
        started.fetch_add(1);
        if (block < 10) return;
        while (!thrown.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    const auto progress = [&](std::size_t, std::size_t total) {
        if (total == 0 || thrown.exchange(true)) return;
        throw std::runtime_error("stop");
    };
    EXPECT_THROW(parallel_for_blocks(1000, 2, fn, progress), std::runtime_error);
    EXPECT_TRUE(thrown.load());
    EXPECT_LT(started.load(), 1000);  // the work stopped before every block ran
}

// A callback that throws only at the end (the last call, after every block) is rethrown too.
TEST(ParallelFor, AProgressCallbackThatThrowsAtTheEndIsRethrown) {
    std::atomic<int> runs{0};
    const auto progress = [&](std::size_t done, std::size_t total) {
        if (done == total) throw std::runtime_error("end");
    };
    EXPECT_THROW(parallel_for_blocks(50, 2, [&](std::size_t) { runs.fetch_add(1); }, progress), std::runtime_error);
    EXPECT_EQ(runs.load(), 50);
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
