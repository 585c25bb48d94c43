// PhaseTotals: the sums and the JSON line a CUDA profiling run writes.
#include "util/phase_totals.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace novelty {
namespace {

TEST(PhaseTotals, SumsSecondsAndSpansPerPhaseAndCounts) {
    PhaseTotals totals;
    totals.add_seconds("gemm", 0.25);
    totals.add_seconds("filter", 0.125);
    totals.add_seconds("gemm", 0.5);
    totals.add_count("tiles", 3);
    totals.add_count("tiles");
    EXPECT_DOUBLE_EQ(totals.seconds("gemm"), 0.75);
    EXPECT_EQ(totals.spans("gemm"), 2u);
    EXPECT_EQ(totals.spans("filter"), 1u);
    EXPECT_EQ(totals.count("tiles"), 4u);
    EXPECT_EQ(totals.seconds("never"), 0.0);
    EXPECT_EQ(totals.count("never"), 0u);
}

TEST(PhaseTotals, JsonLineIsOneValidObjectInFirstUseOrder) {
    PhaseTotals totals;
    totals.add_seconds("queries_in", 0.0125);
    totals.add_seconds("a \"quoted\" name", 1.0);
    totals.add_seconds("queries_in", 0.0025);
    totals.add_count("batches", 2);
    const std::string line = totals.json_line("\"rows\": 5");
    EXPECT_EQ(line.find('\n'), std::string::npos);
    const auto parsed = nlohmann::json::parse(line);
    EXPECT_EQ(parsed["rows"], 5);
    EXPECT_NEAR(parsed["seconds"]["queries_in"].get<double>(), 0.015, 1e-9);
    EXPECT_EQ(parsed["spans"]["queries_in"], 2);
    EXPECT_EQ(parsed["spans"]["a \"quoted\" name"], 1);
    EXPECT_EQ(parsed["counts"]["batches"], 2);
    EXPECT_LT(line.find("queries_in"), line.find("quoted"));
    EXPECT_EQ(nlohmann::json::parse(PhaseTotals().json_line())["seconds"].size(), 0u);
}

}  // namespace
}  // namespace novelty
