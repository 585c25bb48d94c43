// The one table from error kinds to exit codes and HTTP statuses (novelty/util/error.hpp). How the
// edges name a parameter at fault is checked where they run: tests/cli/serve/serve_cli_test.cpp (the
// CLI's flag) and tests/host/server/server_test.cpp (the server's JSON key).
#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace novelty;

TEST(ErrorCodes, OneTableForTheCliAndTheServer) {
    EXPECT_EQ(error_codes(ErrorKind::usage).exit_code, 2);
    EXPECT_EQ(error_codes(ErrorKind::usage).http_status, 400);
    EXPECT_EQ(error_codes(ErrorKind::input).exit_code, 3);
    EXPECT_EQ(error_codes(ErrorKind::input).http_status, 400);
    EXPECT_EQ(error_codes(ErrorKind::corpus).exit_code, 4);
    EXPECT_EQ(error_codes(ErrorKind::corpus).http_status, 500);
    EXPECT_EQ(error_codes(ErrorKind::failure).exit_code, 1);
    EXPECT_EQ(error_codes(ErrorKind::failure).http_status, 500);
}

TEST(ErrorCodes, KindsFollowTheExceptionTypes) {
    EXPECT_EQ(error_kind(UsageError("k must be at least 1", "k")), ErrorKind::usage);
    EXPECT_EQ(error_kind(InputError("a.jsonl", 3, "bad")), ErrorKind::input);
    EXPECT_EQ(error_kind(CorpusError("no manifest")), ErrorKind::corpus);
    EXPECT_EQ(error_kind(Error("disk full")), ErrorKind::failure);
    EXPECT_EQ(error_kind(std::runtime_error("other")), ErrorKind::failure);
    EXPECT_EQ(UsageError("x", "device_memory").parameter(), "device_memory");
    EXPECT_EQ(UsageError("x").parameter(), "");
}
