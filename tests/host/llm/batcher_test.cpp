// Request batching and the job registry: replies in order, errors per batch, weights, stop.
#include "novelty_host/llm/batcher.hpp"
#include "novelty_host/jobs/job_registry.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

using novelty::host::Batcher;
using novelty::host::BatcherOptions;
using novelty::host::JobRegistry;
using novelty::host::JobState;

namespace {

// Doubles each number; records how big each batch was.
struct Doubler {
    std::mutex mutex;
    std::vector<std::size_t> batch_sizes;
    std::vector<int> operator()(std::vector<int>& batch) {
        std::lock_guard lock(mutex);
        batch_sizes.push_back(batch.size());
        std::vector<int> out;
        for (int x : batch) out.push_back(2 * x);
        return out;
    }
};

}  // namespace

TEST(Batcher, SixtyFourConcurrentRequestsCostFarFewerBackendCalls) {
    Doubler doubler;
    // A long wait and room for all 64: the batch closes when it is full, not when the wait ends.
    Batcher<int, int> batcher([&](std::vector<int>& b) { return doubler(b); },
                              BatcherOptions{64, std::chrono::seconds(5)});
    std::vector<std::thread> clients;
    std::vector<int> replies(64, -1);
    for (int i = 0; i < 64; ++i) clients.emplace_back([&, i] { replies[i] = batcher.submit(i).get(); });
    for (auto& c : clients) c.join();
    for (int i = 0; i < 64; ++i) EXPECT_EQ(replies[i], 2 * i);
    EXPECT_EQ(batcher.requests_done(), 64u);
    EXPECT_LE(batcher.backend_calls(), 4u);  // 64 without batching
}

TEST(Batcher, WithoutBatchingEachRequestIsItsOwnCall) {
    Doubler doubler;
    Batcher<int, int> batcher([&](std::vector<int>& b) { return doubler(b); }, BatcherOptions{1, std::chrono::seconds(5)});
    std::vector<std::thread> clients;
    for (int i = 0; i < 16; ++i) clients.emplace_back([&, i] { EXPECT_EQ(batcher.submit(i).get(), 2 * i); });
    for (auto& c : clients) c.join();
    EXPECT_EQ(batcher.backend_calls(), 16u);
    for (std::size_t size : doubler.batch_sizes) EXPECT_EQ(size, 1u);
}

TEST(Batcher, WeightsCapABatchAndAHeavyRequestGoesAlone) {
    Doubler doubler;
    // Weight = the value: 3 + 3 fits in 6, a third 3 does not; 10 exceeds the cap and goes alone.
    Batcher<int, int> batcher([&](std::vector<int>& b) { return doubler(b); },
                              BatcherOptions{6, std::chrono::milliseconds(200)}, [](const int& x) { return std::size_t(x); });
    auto a = batcher.submit(3), b = batcher.submit(3), c = batcher.submit(3), d = batcher.submit(10);
    EXPECT_EQ(a.get(), 6);
    EXPECT_EQ(b.get(), 6);
    EXPECT_EQ(c.get(), 6);
    EXPECT_EQ(d.get(), 20);
    std::lock_guard lock(doubler.mutex);
    for (std::size_t size : doubler.batch_sizes) EXPECT_LE(size, 2u);
    EXPECT_GE(doubler.batch_sizes.size(), 3u);
    EXPECT_EQ(batcher.records_done(), 19u);
}

TEST(Batcher, ABackendErrorReachesEveryRequestOfItsBatchOnly) {
    std::atomic<int> calls{0};
    Batcher<int, int> batcher(
        [&](std::vector<int>& batch) -> std::vector<int> {
            ++calls;
            for (int x : batch)
                if (x < 0) throw std::runtime_error("negative");
            return batch;
        },
        BatcherOptions{8, std::chrono::milliseconds(100)});
    auto bad = batcher.submit(-1), good_same_batch = batcher.submit(1);
    EXPECT_THROW(bad.get(), std::runtime_error);
    EXPECT_THROW(good_same_batch.get(), std::runtime_error);
    EXPECT_EQ(batcher.submit(5).get(), 5);  // the worker goes on
}

TEST(Batcher, StopAnswersQueuedRequestsThenRefusesNewOnes) {
    Doubler doubler;
    auto batcher = std::make_unique<Batcher<int, int>>([&](std::vector<int>& b) { return doubler(b); },
                                                       BatcherOptions{64, std::chrono::seconds(30)});
    auto a = batcher->submit(1), b = batcher->submit(2);
    batcher->stop();  // does not wait the 30 s
    EXPECT_EQ(a.get(), 2);
    EXPECT_EQ(b.get(), 4);
    EXPECT_THROW(batcher->submit(3), std::runtime_error);
}

TEST(JobRegistry, RunsJobsAndKeepsResultsAndErrors) {
    JobRegistry jobs(2);
    const std::string ok = jobs.submit("test", [] { return std::string("{\"answer\":42}"); });
    const std::string bad = jobs.submit("test", []() -> std::string { throw std::runtime_error("it broke"); });
    EXPECT_EQ(ok.size(), 32u);
    EXPECT_NE(ok, bad);
    for (int i = 0; i < 2000; ++i) {
        if (jobs.get(ok)->state == JobState::done && jobs.get(bad)->state == JobState::failed) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(jobs.get(ok)->state, JobState::done);
    EXPECT_EQ(jobs.get(ok)->result, "{\"answer\":42}");
    EXPECT_EQ(jobs.get(ok)->kind, "test");
    EXPECT_GT(jobs.get(ok)->finished_unix, 0);
    EXPECT_EQ(jobs.get(bad)->state, JobState::failed);
    EXPECT_EQ(jobs.get(bad)->error, "it broke");
    EXPECT_FALSE(jobs.get("0123").has_value());
    EXPECT_EQ(jobs.counts()[static_cast<int>(JobState::done)], 1u);
}

TEST(JobRegistry, ForgetsTheOldestFinishedJobsBeyondItsLimit) {
    JobRegistry jobs(1, 2);
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) ids.push_back(jobs.submit("test", [i] { return std::to_string(i); }));
    for (int i = 0; i < 2000 && !(jobs.get(ids[3]) && jobs.get(ids[3])->state == JobState::done); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_FALSE(jobs.get(ids[0]).has_value());
    EXPECT_FALSE(jobs.get(ids[1]).has_value());
    EXPECT_EQ(jobs.get(ids[2])->result, "2");
    EXPECT_EQ(jobs.get(ids[3])->result, "3");
}

TEST(JobRegistry, StopLetsTheRunningJobFinishAndFailsQueuedOnes) {
    JobRegistry jobs(1);
    std::atomic<bool> release{false}, running{false};
    const std::string first = jobs.submit("test", [&] {
        running = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return std::string("\"finished\"");
    });
    const std::string second = jobs.submit("test", [] { return std::string("\"never\""); });
    while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::thread stopper([&] { jobs.stop(); });
    // stop() fails the queued job at once, then waits for the running one.
    while (jobs.get(second)->state != JobState::failed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    release = true;
    stopper.join();
    EXPECT_EQ(jobs.get(first)->state, JobState::done);
    EXPECT_EQ(jobs.get(first)->result, "\"finished\"");
    EXPECT_EQ(jobs.get(second)->state, JobState::failed);
    EXPECT_THROW(jobs.submit("test", [] { return std::string(); }), std::runtime_error);
}

TEST(JobRegistry, ShowsTheLastProgressAWorkReported) {
    JobRegistry jobs(1);
    std::atomic<bool> reported{false}, release{false};
    const std::string id = jobs.submit_with_progress("test", [&](const novelty::host::JobProgressFn& progress) {
        progress("items", 2, 5);
        reported = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        progress("items", 5, 5);
        return std::string("1");
    });
    while (!reported) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto running = jobs.get(id);
    ASSERT_TRUE(running->progress.has_value());
    EXPECT_EQ(running->state, JobState::running);
    EXPECT_EQ(running->progress->stage, "items");
    EXPECT_EQ(running->progress->done, 2u);
    EXPECT_EQ(running->progress->total, 5u);
    release = true;
    for (int i = 0; i < 2000 && jobs.get(id)->state != JobState::done; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(jobs.get(id)->progress->done, 5u);
    // Work without progress reports none.
    const std::string plain = jobs.submit("test", [] { return std::string("2"); });
    for (int i = 0; i < 2000 && jobs.get(plain)->state != JobState::done; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_FALSE(jobs.get(plain)->progress.has_value());
}
