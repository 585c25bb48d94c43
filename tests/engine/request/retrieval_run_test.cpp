// The request layer's retrieval settings (novelty/request/retrieval_run.hpp), shared by `novelty
// retrieve` and novelty.retrieve in Python: the rewriting modes they ask for, and bad settings
// refused with the parameter named. (The rankings themselves: tests/cli/retrieval/retrieval_cli_test.cpp
// and python/tests/test_retrieve_llm.py, which compare both edges.)
#include "novelty/request/retrieval_run.hpp"

#include "novelty/util/error.hpp"

#include <gtest/gtest.h>

namespace novelty {
namespace {

std::string refused_parameter(const RetrievalSettings& s) {
    try {
        retrieval_modes(s);
    } catch (const UsageError& e) {
        return e.parameter();
    }
    return "(accepted)";
}

TEST(RetrievalModes, ExpansionComesBeforeHydeAndSingleModeAppends) {
    RetrievalSettings s;
    EXPECT_TRUE(retrieval_modes(s).empty());
    s.expand = 3;
    s.hyde = 5;
    s.fuse_original = true;
    auto modes = retrieval_modes(s);
    ASSERT_EQ(modes.size(), 2u);
    EXPECT_EQ(modes[0].tag, "expand");
    EXPECT_EQ(modes[0].n, 3u);
    EXPECT_FALSE(modes[0].append);
    EXPECT_TRUE(modes[0].include_original);
    EXPECT_EQ(modes[1].tag, "hyde");
    EXPECT_EQ(modes[1].n, 5u);
    s.expand = 1;
    s.hyde = 0;
    s.expand_mode = "single";
    modes = retrieval_modes(s);
    ASSERT_EQ(modes.size(), 1u);
    EXPECT_TRUE(modes[0].append);
}

TEST(RetrievalModes, BadSettingsNameTheirParameter) {
    RetrievalSettings s;
    s.methods = {"dense", "sparse"};
    EXPECT_EQ(refused_parameter(s), "methods");
    s.methods = {"bm25", "bm25"};
    EXPECT_EQ(refused_parameter(s), "methods");
    s.methods = {};
    EXPECT_EQ(refused_parameter(s), "methods");
    s.methods = {"hybrid"};
    s.k = 0;
    EXPECT_EQ(refused_parameter(s), "k");
    s.k = SearchBackend::max_k + 1;
    EXPECT_EQ(refused_parameter(s), "k");
    s.k = 10;
    s.fusion_depth = 0;
    EXPECT_EQ(refused_parameter(s), "fusion_depth");
    s.fusion_depth = 100;
    s.expand = 2;
    s.expand_mode = "both";
    EXPECT_EQ(refused_parameter(s), "expand_mode");
    s.expand_mode = "single";
    EXPECT_EQ(refused_parameter(s), "expand");
    s.expand = 1;
    EXPECT_EQ(refused_parameter(s), "(accepted)");
}

}  // namespace
}  // namespace novelty
