// The host clients' shared retry rules (host/src/llm/http_util.hpp).
#include "llm/http_util.hpp"

#include <gtest/gtest.h>

namespace novelty::host::detail {
namespace {

TEST(RetryBackoff, DoublesWithJitterAndHonoursTheServerUpToTheCap) {
    std::minstd_rand rng(7);
    for (int retry = 0; retry < 5; ++retry) {
        const double nominal = 0.5 * (1 << retry);
        for (int draw = 0; draw < 50; ++draw) {
            const double wait = retry_backoff(retry, std::nullopt, 0.5, 60.0, rng);
            ASSERT_LE(wait, nominal) << retry;
            ASSERT_GE(wait, 0.9 * nominal) << "at most 10% jitter, retry " << retry;
        }
    }
    EXPECT_LE(retry_backoff(30, std::nullopt, 0.5, 60.0, rng), 60.0);   // capped
    EXPECT_LE(retry_backoff(1000, std::nullopt, 0.5, 60.0, rng), 60.0);  // no overflow
    EXPECT_EQ(retry_backoff(0, 3.0, 0.5, 60.0, rng), 3.0);              // the server's wait, no jitter
    EXPECT_EQ(retry_backoff(0, 600.0, 0.5, 60.0, rng), 60.0);           // capped as well
}

TEST(RetryRules, StatusesAndHeaders) {
    EXPECT_TRUE(retryable_status(429));
    EXPECT_TRUE(retryable_status(503));
    EXPECT_TRUE(retryable_status(408));
    EXPECT_FALSE(retryable_status(400));
    EXPECT_FALSE(retryable_status(200));
    EXPECT_EQ(retry_after_seconds({{"retry-after", "2"}}), 2.0);
    EXPECT_EQ(retry_after_seconds({{"retry-after-ms", "250"}, {"retry-after", "9"}}), 0.25);
    EXPECT_FALSE(retry_after_seconds({}).has_value());
}

}  // namespace
}  // namespace novelty::host::detail
