// Numeric flags written so that CLI11 would read a number the user did not mean (issue 48): ''
// was read as 0 and '010' as octal 8. Every numeric flag of every command is checked in one place
// (tools/numeric_flags.cpp); these cases span commands, integer, unsigned and real flags.
#include "novelty/io/npy.hpp"
#include "cli_corpora.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

// The three-paper corpus, and one query naming its first paper.
std::string small_corpus(const TempDir& tmp) {
    write_file(tmp.file("q.jsonl"), "{\"id\": \"a\"}\n");
    return novelty::test::three_paper_corpus(tmp);
}

struct Case {
    std::string command;  ///< everything before the flag
    std::string flag;
};

std::vector<Case> cases(const TempDir& tmp, const std::string& dir) {
    const std::string search = "search --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl"));
    const std::string score = "score --corpus " + shell_quote(dir) + " --ideas " + shell_quote(tmp.file("q.jsonl"));
    const std::string dedup = "dedup --ideas " + shell_quote(tmp.file("q.jsonl")) + " --vectors " +
                              shell_quote(tmp.file("v1.npy"));
    return {{search, "--k"},          {search, "--threads"}, {score, "--p"},
            {score, "--evidence"},    {dedup, "--threshold"}, {"index " + shell_quote(dir), "--q"},
            {"serve --corpus " + shell_quote(dir), "--port"}};
}

}  // namespace

TEST(NumericFlags, EmptyLeadingZeroAndHexValuesAreRefusedNamingTheFlag) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    const float one[4] = {1, 0, 0, 0};
    novelty::write_npy(tmp.file("v1.npy"), novelty::DType::f32, 1, 4, one);
    for (const Case& c : cases(tmp, dir)) {
        for (const std::string& value : {std::string("''"), std::string("010"), std::string("0x10"), std::string("00")}) {
            const auto r = run_cli(c.command + " " + c.flag + " " + value);
            EXPECT_EQ(r.exit_code, 2) << c.flag << " " << value << ": " << r.err;
            EXPECT_NE(r.err.find(c.flag), std::string::npos) << c.flag << " " << value << ": " << r.err;
        }
    }
    // The form with '=' reaches the same check.
    const auto r = run_cli(cases(tmp, dir)[0].command + " --k=010");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("leading zero"), std::string::npos) << r.err;
    const auto e = run_cli(cases(tmp, dir)[0].command + " --k=");
    EXPECT_EQ(e.exit_code, 2) << e.err;
    EXPECT_NE(e.err.find("--k"), std::string::npos) << e.err;
}

TEST(NumericFlags, PlainDecimalValuesStillWork) {
    TempDir tmp;
    const std::string dir = small_corpus(tmp);
    const float one[4] = {1, 0, 0, 0};
    novelty::write_npy(tmp.file("v1.npy"), novelty::DType::f32, 1, 4, one);
    const std::vector<Case> all = cases(tmp, dir);
    auto r = run_cli(all[0].command + " --k 2 --threads 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2. "), std::string::npos) << "k = 2 lists two papers: " << r.out;
    EXPECT_EQ(r.out.find("3. "), std::string::npos) << "k = 2 lists two papers: " << r.out;
    r = run_cli(all[0].command + " --k 0");
    EXPECT_EQ(r.exit_code, 2) << "a lone 0 is a number, refused by the flag's own range: " << r.err;
    EXPECT_EQ(r.err.find("leading zero"), std::string::npos) << r.err;
    for (const std::string& threshold : {std::string("0.5"), std::string(".5"), std::string("5e-1"), std::string("+0.5")}) {
        r = run_cli(all[4].command + " --threshold " + threshold);
        EXPECT_EQ(r.exit_code, 0) << threshold << ": " << r.err;
    }
}
