// novelty eval sweep end to end: its variants agree with `novelty score` + `eval auroc`, its
// JSON, table and plot, and its errors; and score's density_p, rnd_euclid and --historical-from.
#include "novelty/io/npy.hpp"
#include "json_lines.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

constexpr int n_papers = 300, n_ideas = 40, dim = 8;

// 300 papers (years 2000..2019), 40 ideas given as vectors, half with a cutoff and some with an
// exclusion, labelled in two groups; the labels follow the first coordinate, so scores that see
// the corpus's geometry separate them partly.
struct SweepFixture {
    TempDir tmp;
    std::string corpus, ideas, vectors, labels;

    SweepFixture() {
        std::string records;
        for (int i = 0; i < n_papers; ++i)
            records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"Paper " + std::to_string(i) +
                       "\", \"year\": " + std::to_string(2000 + i % 20) + ", \"citations\": " + std::to_string(i % 9) + "}\n";
        novelty::test::write_file(tmp.file("papers.jsonl"), records);
        corpus = tmp.file("c");
        EXPECT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(corpus)).exit_code, 0);
        const auto v = novelty::test::random_unit_rows(n_papers, dim, 21);
        novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, n_papers, dim, v.data());
        EXPECT_EQ(run_cli("corpus add-vectors -q " + shell_quote(corpus) + " --vectors " + shell_quote(tmp.file("v.npy"))).exit_code, 0);
        const auto iv = novelty::test::random_unit_rows(n_ideas, dim, 22);
        std::string idea_lines, label_lines;
        for (int i = 0; i < n_ideas; ++i) {
            const std::string id = "i" + std::to_string(i);
            idea_lines += "{\"id\": \"" + id + "\"" + (i % 2 ? ", \"date\": \"2017\"" : "") +
                          (i % 5 == 0 ? ", \"exclude\": [\"p3\", \"p40\"]" : "") + "}\n";
            const int label = iv[i * dim] > 0 ? 1 : 0;
            label_lines += "{\"id\": \"" + id + "\", \"label\": " + std::to_string(label) + ", \"field\": \"" +
                           (i < n_ideas / 2 ? "a" : "b") + "\"}\n";
        }
        ideas = tmp.file("ideas.jsonl");
        vectors = tmp.file("ideas.npy");
        labels = tmp.file("labels.jsonl");
        novelty::test::write_file(ideas, idea_lines);
        novelty::write_npy(vectors, novelty::DType::f32, n_ideas, dim, iv.data());
        novelty::test::write_file(labels, label_lines);
    }

    std::string sweep_base() const {
        return "eval sweep -q --corpus " + shell_quote(corpus) + " --ideas " + shell_quote(ideas) + " --vectors " +
               shell_quote(vectors) + " --labels " + shell_quote(labels);
    }
};

const nlohmann::json& variant(const nlohmann::json& sweep, const std::string& name) {
    for (const auto& v : sweep["variants"])
        if (v["name"] == name) return v;
    throw std::runtime_error("no variant " + name);
}

}  // namespace

TEST(EvalSweepCli, VariantsAgreeWithScoreAndEvalAuroc) {
    SweepFixture f;
    const auto r = run_cli(f.sweep_base() + " --p 10,100 --q 5,50 --hd 3,5 --bootstrap 50 --folds 3 --out " +
                           shell_quote(f.tmp.file("sweep.json")) + " --plot " + shell_quote(f.tmp.file("sweep.svg")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json sweep = nlohmann::json::parse(novelty::test::read_file(f.tmp.file("sweep.json")));
    EXPECT_EQ(sweep["n_ideas"], n_ideas);
    EXPECT_EQ(sweep["groups"], nlohmann::json::array({"all", "a", "b"}));
    // 3 kinds x 2 P x 2 Q RND, 3 x 2 densities, 2 density_p, 2 HD, 2 x 2 relative HD, 2 means,
    // the rank average and the logistic combination.
    EXPECT_EQ(sweep["variants"].size(), 12u + 6 + 2 + 2 + 4 + 2 + 1 + 1);
    EXPECT_EQ(sweep["fold_picks"].size(), 3u);
    EXPECT_TRUE(variant(sweep, sweep["winner"].get<std::string>())["selectable"].get<bool>());
    EXPECT_FALSE(variant(sweep, "rank_avg[rnd,hd]")["selectable"].get<bool>());
    EXPECT_TRUE(sweep.contains("logistic_full"));
    EXPECT_NE(novelty::test::read_file(f.tmp.file("sweep.svg")).find("<svg"), std::string::npos);
    // Relative HD is RND with the Euclidean density over HD's neighbours.
    EXPECT_EQ(variant(sweep, "rel_hd[P=10,n=5]")["groups"], variant(sweep, "rnd[euclid,P=10,Q=5]")["groups"]);

    // The same ideas through `novelty score` (its own per-cutoff densities) and `eval auroc`.
    const std::string scores = f.tmp.file("scores.jsonl");
    const auto s = run_cli("score -q --corpus " + shell_quote(f.corpus) + " --ideas " + shell_quote(f.ideas) + " --vectors " +
                           shell_quote(f.vectors) + " --p 100 --q 50 --methods rnd,hd,density,density_p,rnd_euclid,rel_hd,rnd_hd --out " +
                           shell_quote(scores));
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const auto e = run_cli("eval auroc --scores " + shell_quote(scores) + " --labels " + shell_quote(f.labels) +
                           " --group-by field --methods rnd,hd,density,density_p,rnd_euclid,rel_hd,rnd_hd --bootstrap 50 --json");
    ASSERT_EQ(e.exit_code, 0) << e.err;
    const nlohmann::json auroc = nlohmann::json::parse(e.out)["auroc"];
    const std::vector<std::pair<std::string, std::string>> same{{"rnd", "rnd[cos,P=100,Q=50]"},
                                                                {"hd", "hd[n=5]"},
                                                                {"density", "density[cos,Q=50]"},
                                                                {"density_p", "density_p[P=100]"},
                                                                {"rnd_euclid", "rnd[euclid,P=100,Q=50]"},
                                                                {"rel_hd", "rel_hd[P=100,n=5]"},
                                                                {"rnd_hd", "mean[rnd,rel_hd][P=100]"}};
    for (const auto& [method, name] : same)
        for (const std::string group : {"all", "a", "b"}) {
            const auto& mine = variant(sweep, name)["groups"][group];
            EXPECT_NEAR(mine["auroc"].get<double>(), auroc[group][method]["value"].get<double>(), 1e-12) << name << " " << group;
            // Same seed, same scores: the same bootstrap interval.
            EXPECT_NEAR(mine["ci95"][0].get<double>(), auroc[group][method]["ci95"][0].get<double>(), 1e-12) << name;
        }
}

TEST(EvalSweepCli, TableAndErrors) {
    SweepFixture f;
    const auto table = run_cli(f.sweep_base() + " --p 10 --q 5 --hd 5 --bootstrap 0 --folds 2 --densities cos");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("rnd[cos,P=100,Q=50]"), std::string::npos);
    EXPECT_NE(table.out.find("Winner: "), std::string::npos);
    EXPECT_NE(table.out.find("fold 2:"), std::string::npos);
    EXPECT_NE(table.out.find("Default rule met: "), std::string::npos);

    const auto zero_p = run_cli(f.sweep_base() + " --p 0");
    EXPECT_EQ(zero_p.exit_code, 2);
    EXPECT_NE(zero_p.err.find("--p: '0' is not an integer from 1 to 2048"), std::string::npos) << zero_p.err;
    EXPECT_EQ(run_cli(f.sweep_base() + " --q 5,x").exit_code, 2);
    EXPECT_EQ(run_cli(f.sweep_base() + " --hd 2049").exit_code, 2);
    EXPECT_NE(run_cli(f.sweep_base() + " --hd ,").err.find("--hd needs at least one value"), std::string::npos);
    EXPECT_EQ(run_cli(f.sweep_base() + " --densities manhattan").exit_code, 2);
    novelty::test::write_file(f.labels, "{\"id\": \"i1\", \"label\": 1, \"field\": \"a\"}\n{\"id\": \"i2\", \"label\": 7}\n");
    const auto bad = run_cli(f.sweep_base());
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("labels.jsonl:2"), std::string::npos) << bad.err;
}

TEST(ScoreCli, HistoricalFromBoundsHdAndIsRecorded) {
    SweepFixture f;
    const std::string base = "score -q --corpus " + shell_quote(f.corpus) + " --ideas " + shell_quote(f.ideas) + " --vectors " +
                             shell_quote(f.vectors) + " --p 10 --q 5 --split 2015 --methods hd,on";
    auto hd_of = [&](const std::string& extra) {
        const auto r = run_cli(base + extra + " --out " + shell_quote(f.tmp.file("h.jsonl")));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return novelty::test::json_lines(f.tmp.file("h.jsonl"));
    };
    const auto paper = hd_of(""), all = hd_of(" --historical-from none"), late = hd_of(" --historical-from 2013");
    EXPECT_EQ(paper[0]["provenance"]["historical_from"], "2011");
    EXPECT_TRUE(all[0]["provenance"]["historical_from"].is_null());
    EXPECT_EQ(late[0]["provenance"]["historical_from"], "2013");
    for (std::size_t i = 0; i < paper.size(); ++i) {
        // Fewer historical papers can only push the nearest ones further away.
        EXPECT_GE(paper[i]["scores"]["hd"].get<double>(), all[i]["scores"]["hd"].get<double>() - 1e-12);
        EXPECT_GE(late[i]["scores"]["hd"].get<double>(), paper[i]["scores"]["hd"].get<double>() - 1e-12);
    }
    // A split in or before 2011 keeps every earlier paper by default.
    const auto early = run_cli("score -q --corpus " + shell_quote(f.corpus) + " --ideas " + shell_quote(f.ideas) +
                               " --vectors " + shell_quote(f.vectors) + " --p 10 --q 5 --split 2010 --out " +
                               shell_quote(f.tmp.file("e.jsonl")));
    ASSERT_EQ(early.exit_code, 0) << early.err;
    EXPECT_TRUE(novelty::test::json_lines(f.tmp.file("e.jsonl"))[0]["provenance"]["historical_from"].is_null());
    EXPECT_EQ(run_cli(base + " --historical-from 2013-13").exit_code, 2);
    // Relative HD reads HD over 5 neighbours from the q-long lists: q 4 is refused.
    const auto short_q = run_cli("score -q --corpus " + shell_quote(f.corpus) + " --ideas " + shell_quote(f.ideas) +
                                 " --vectors " + shell_quote(f.vectors) + " --p 10 --q 4 --methods rnd_hd");
    EXPECT_EQ(short_q.exit_code, 2);
    EXPECT_NE(short_q.err.find("q >= 5"), std::string::npos) << short_q.err;
}

TEST(EvalSweepCli, PairedComparisons) {
    SweepFixture f;
    const std::string pairs = "rnd[cos,P=10,Q=5]:hd[n=5],hd[n=5]:hd[n=5]";
    const auto r = run_cli(f.sweep_base() + " --p 10 --q 5 --hd 5 --densities cos --bootstrap 100 --folds 2 --json --paired " +
                           shell_quote(pairs));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json sweep = nlohmann::json::parse(r.out);
    ASSERT_EQ(sweep["paired"].size(), 2u);
    const auto& first = sweep["paired"][0];
    EXPECT_EQ(first["a"], "rnd[cos,P=10,Q=5]");
    EXPECT_EQ(first["b"], "hd[n=5]");
    for (const std::string group : {"all", "a", "b"}) {
        const double a = variant(sweep, "rnd[cos,P=10,Q=5]")["groups"][group]["auroc"].get<double>();
        const double b = variant(sweep, "hd[n=5]")["groups"][group]["auroc"].get<double>();
        const auto& d = first["groups"][group];
        EXPECT_NEAR(d["difference"].get<double>(), a - b, 1e-12) << group;
        EXPECT_LE(d["ci95"][0].get<double>(), d["ci95"][1].get<double>());
    }
    // A variant against itself: 0 on every resample.
    EXPECT_EQ(sweep["paired"][1]["groups"]["all"]["ci95"], nlohmann::json::array({0.0, 0.0}));
    EXPECT_EQ(sweep["paired"][1]["groups"]["all"]["share_not_above"], 1.0);

    const auto table = run_cli(f.sweep_base() + " --p 10 --q 5 --hd 5 --densities cos --bootstrap 20 --folds 2 --paired " +
                               shell_quote(pairs));
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("Paired differences"), std::string::npos);
    EXPECT_NE(table.out.find("rnd[cos,P=10,Q=5] - hd[n=5]"), std::string::npos);

    const auto unknown = run_cli(f.sweep_base() + " --p 10 --paired " + shell_quote("rnd[cos,P=20,Q=5]:hd[n=5]"));
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("rnd[cos,P=20,Q=5]"), std::string::npos) << unknown.err;
    EXPECT_EQ(run_cli(f.sweep_base() + " --paired hd").exit_code, 2);
}
