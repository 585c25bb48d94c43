// novelty eval auroc end to end.
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

// Six ideas in two fields. "x" is scored but not labelled; "y" is labelled but not scored.
// bio: a (1, rnd 90), b (0, rnd 10), c (1, rnd 50)  -> rnd AUROC 1
// cs:  d (0, rnd 50), e (1, rnd 50), f (0, rnd 80)  -> rnd pairs (50 vs 50) 1/2, (50 vs 80) 0 -> 0.25
const char* const scores_jsonl =
    "{\"id\": \"a\", \"scores\": {\"rnd\": 90, \"hd\": 1.2, \"on\": null, \"density\": 0.6}, \"nd\": 0.6}\n"
    "{\"id\": \"b\", \"scores\": {\"rnd\": 10, \"hd\": 0.8, \"on\": null, \"density\": 0.4}}\n"
    "\n"
    "{\"id\": \"c\", \"scores\": {\"rnd\": 50, \"hd\": 1.0, \"on\": 2.0, \"density\": 0.5}}\n"
    "{\"id\": \"d\", \"scores\": {\"rnd\": 50, \"hd\": 0.3, \"on\": 1.0, \"density\": 0.3}}\n"
    "{\"id\": \"e\", \"scores\": {\"rnd\": 50, \"hd\": 0.4, \"on\": 3.0, \"density\": 0.35}}\n"
    "{\"id\": \"f\", \"scores\": {\"rnd\": 80, \"hd\": 0.2, \"on\": null, \"density\": 0.25}}\n"
    "{\"id\": \"x\", \"scores\": {\"rnd\": 1, \"hd\": 1, \"on\": 1, \"density\": 1}}\n";

const char* const labels_jsonl =
    "{\"id\": \"a\", \"label\": 1, \"field\": \"bio\"}\n"
    "{\"id\": \"b\", \"label\": false, \"field\": \"bio\"}\n"
    "{\"id\": \"c\", \"label\": true, \"field\": \"bio\"}\n"
    "{\"id\": \"d\", \"label\": 0, \"field\": \"cs\"}\n"
    "{\"id\": \"e\", \"label\": 1, \"field\": \"cs\"}\n"
    "{\"id\": \"f\", \"label\": 0, \"field\": \"cs\"}\n"
    "{\"id\": \"y\", \"label\": 1, \"field\": \"cs\"}\n";

struct Files {
    TempDir tmp;
    std::string scores = tmp.file("scores.jsonl");
    std::string labels = tmp.file("labels.jsonl");
    Files(const std::string& s = scores_jsonl, const std::string& l = labels_jsonl) {
        write_file(scores, s);
        write_file(labels, l);
    }
    std::string args() const { return "eval auroc --scores " + shell_quote(scores) + " --labels " + shell_quote(labels); }
};

}  // namespace

TEST(EvalCli, JsonPerGroupWithUnmatchedIdsReported) {
    Files files;
    const auto result = run_cli(files.args() + " --group-by field --bootstrap 200 --seed 3 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("1 idea in"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("no label"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("no score"), std::string::npos) << result.err;
    const auto j = nlohmann::json::parse(result.out);
    EXPECT_EQ(j["n_scored"], 7);
    EXPECT_EQ(j["n_labelled"], 7);
    EXPECT_EQ(j["n_matched"], 6);
    for (const char* group : {"all", "bio", "cs"}) {
        ASSERT_TRUE(j["auroc"].contains(group)) << group;
        ASSERT_TRUE(j["distribution"].contains(group)) << group;
        for (const char* method : {"rnd", "hd", "on", "density"}) {
            EXPECT_TRUE(j["auroc"][group].contains(method)) << group << " " << method;
            EXPECT_TRUE(j["distribution"][group].contains(method)) << group << " " << method;
        }
    }
    const auto& bio_rnd = j["auroc"]["bio"]["rnd"];
    EXPECT_DOUBLE_EQ(bio_rnd["value"].get<double>(), 1.0);
    EXPECT_EQ(bio_rnd["n_pos"], 2);
    EXPECT_EQ(bio_rnd["n_neg"], 1);
    ASSERT_TRUE(bio_rnd["ci95"].is_array());
    EXPECT_DOUBLE_EQ(bio_rnd["ci95"][0].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(j["auroc"]["cs"]["rnd"]["value"].get<double>(), 0.25);
    // all: positives {90, 50, 50}, negatives {10, 50, 80}: 90 beats 3; each 50 beats 10, ties 50 -> 1.5 each.
    EXPECT_DOUBLE_EQ(j["auroc"]["all"]["rnd"]["value"].get<double>(), 6.0 / 9.0);
    const auto& ci = j["auroc"]["all"]["rnd"]["ci95"];
    EXPECT_LE(ci[0].get<double>(), 6.0 / 9.0);
    EXPECT_GE(ci[1].get<double>(), 6.0 / 9.0);
    // "on" is null for a, b and f: bio keeps only c (a positive), so no AUROC there.
    const auto& bio_on = j["auroc"]["bio"]["on"];
    EXPECT_TRUE(bio_on["value"].is_null());
    EXPECT_TRUE(bio_on["ci95"].is_null());
    EXPECT_EQ(bio_on["reason"], "no negatives");
    EXPECT_EQ(bio_on["n_missing"], 2);
    EXPECT_EQ(j["auroc"]["all"]["on"]["n_pos"], 2);
    EXPECT_EQ(j["auroc"]["all"]["on"]["n_neg"], 1);
    const auto& dist = j["distribution"]["cs"]["rnd"];
    EXPECT_EQ(dist["n"], 3);
    EXPECT_DOUBLE_EQ(dist["min"].get<double>(), 50);
    EXPECT_DOUBLE_EQ(dist["median"].get<double>(), 50);
    EXPECT_DOUBLE_EQ(dist["max"].get<double>(), 80);
    EXPECT_DOUBLE_EQ(dist["mean"].get<double>(), 60);
    for (const char* key : {"sd", "q1", "q3"}) EXPECT_TRUE(dist.contains(key)) << key;
}

TEST(EvalCli, DeterministicForASeedAndOutFileMatchesStdout) {
    Files files;
    const std::string out = files.tmp.file("eval.json");
    const auto a = run_cli(files.args() + " --json --seed 5 --out " + shell_quote(out));
    const auto b = run_cli(files.args() + " --json --seed 5");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(nlohmann::json::parse(novelty::test::read_file(out)), nlohmann::json::parse(a.out));
    const auto j = nlohmann::json::parse(a.out);
    EXPECT_EQ(j["auroc"].size(), 1u);  // no --group-by: only "all"
    EXPECT_TRUE(j["auroc"].contains("all"));
}

TEST(EvalCli, TableMethodsAndNoBootstrap) {
    Files files;
    const auto result = run_cli(files.args() + " --group-by field --methods rnd,hd --bootstrap 0");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("AUROC"), std::string::npos);
    EXPECT_NE(result.out.find("Score distributions"), std::string::npos);
    EXPECT_NE(result.out.find("bio"), std::string::npos);
    EXPECT_NE(result.out.find("0.250"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("density"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("no bootstrap"), std::string::npos) << result.out;
}

TEST(EvalCli, BadLabelsNameFileAndLine) {
    {
        Files files(scores_jsonl, "{\"id\": \"a\", \"label\": 1}\n{\"id\": \"b\", \"label\": 2}\n");
        const auto result = run_cli(files.args());
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.labels + ":2:"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("label"), std::string::npos) << result.err;
    }
    {
        Files files(scores_jsonl, "{\"id\": \"a\", \"label\": \"yes\"}\n");
        EXPECT_NE(run_cli(files.args()).err.find(files.labels + ":1:"), std::string::npos);
    }
    {
        Files files(scores_jsonl, "{\"id\": \"a\", \"label\": 1}\n\n{\"label\": 0}\n");
        const auto result = run_cli(files.args());
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.labels + ":3: no \"id\""), std::string::npos) << result.err;
    }
    {
        Files files(scores_jsonl, "{\"id\": \"a\", \"label\": 1}\n{\"id\": \"a\", \"label\": 0}\n");
        const auto result = run_cli(files.args());
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.labels + ":2: duplicate id \"a\""), std::string::npos) << result.err;
    }
    {
        Files files(std::string(scores_jsonl) + "{\"id\": \"a\", \"scores\": {\"rnd\": 1}}\n");
        const auto result = run_cli(files.args());
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.scores + ":9: duplicate id"), std::string::npos) << result.err;
    }
    {
        Files files("{\"id\": \"a\", \"scores\": {\"rnd\": \"high\"}}\n");
        const auto result = run_cli(files.args() + " --methods rnd");
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.scores + ":1:"), std::string::npos) << result.err;
    }
    {
        Files files(scores_jsonl, "{\"id\": \"a\", \"label\": 1}\n");
        const auto result = run_cli(files.args() + " --group-by field");
        EXPECT_EQ(result.exit_code, 3);
        EXPECT_NE(result.err.find(files.labels + ":1: no \"field\""), std::string::npos) << result.err;
    }
}

TEST(EvalCli, UsageErrors) {
    Files files;
    EXPECT_EQ(run_cli("eval").exit_code, 2);
    EXPECT_EQ(run_cli(files.args() + " --methods rdn").exit_code, 2);
    EXPECT_EQ(run_cli("eval auroc --scores " + shell_quote(files.scores)).exit_code, 2);
    const auto missing = run_cli("eval auroc --scores " + shell_quote(files.tmp.file("none.jsonl")) + " --labels " +
                                 shell_quote(files.labels));
    EXPECT_EQ(missing.exit_code, 3);
}

TEST(EvalCli, PlotWritesAnSvgWithTheGroups) {
    Files files;
    const std::string svg_path = files.tmp.file("plot.svg");
    const auto result = run_cli(files.args() + " --group-by field --plot " + shell_quote(svg_path));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string svg = novelty::test::read_file(svg_path);
    EXPECT_TRUE(svg.rfind("<?xml", 0) == 0 || svg.rfind("<svg", 0) == 0);
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    for (const char* text : {">all<", ">bio<", ">cs<", ">RND<", ">HD<", "AUROC"})
        EXPECT_NE(svg.find(text), std::string::npos) << text;
    // Well formed enough: every opened group is closed.
    std::size_t opened = 0, closed = 0;
    for (std::size_t p = svg.find("<g>"); p != std::string::npos; p = svg.find("<g>", p + 1)) ++opened;
    for (std::size_t p = svg.find("</g>"); p != std::string::npos; p = svg.find("</g>", p + 1)) ++closed;
    EXPECT_EQ(opened, closed);
    EXPECT_EQ(opened, 4u);
}
