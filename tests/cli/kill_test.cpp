// Crash safety: the CLI is killed (SIGKILL, through the NOVELTY_KILL_AT test hook) at every
// write and rename step of corpus import, add-vectors, corpus embed and index. After each kill
// the corpus opens as the old one, opens as the new one, or is refused; it is never a mixture
// (files that match their manifest and caches that match their checksums, or a refusal), and
// running the command again finishes the job.
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

/// What a corpus directory holds, as every command would see it.
struct State {
    bool refused = false;
    std::string why;                  ///< the refusal
    std::vector<std::string> ids;     ///< papers in row order
    std::string vectors_sha256;
    std::set<std::string> caches;     ///< verified self-join caches for these vectors
    bool operator==(const State& o) const {
        return refused == o.refused && ids == o.ids && vectors_sha256 == o.vectors_sha256 && caches == o.caches;
    }
    /// The same papers and vectors as `o`, with some or all of its caches (a cache is derived
    /// data: dropping it loses nothing, a cache `o` does not have would be a mixture).
    bool same_corpus_as(const State& o) const {
        if (refused || o.refused || ids != o.ids || vectors_sha256 != o.vectors_sha256) return false;
        for (const auto& c : caches)
            if (!o.caches.count(c)) return false;
        return true;
    }
    std::string describe() const {
        if (refused) return "refused: " + why;
        std::string s = std::to_string(ids.size()) + " papers, vectors " + (vectors_sha256.empty() ? "none" : vectors_sha256.substr(0, 12));
        for (const auto& c : caches) s += ", " + c;
        return s;
    }
};

// Opens `dir` (which repairs an interrupted import) and checks every byte against the manifest.
State inspect(const std::string& dir) {
    State state;
    try {
        const novelty::Corpus corpus = novelty::Corpus::open(dir);
        const auto& m = corpus.manifest();
        EXPECT_EQ(novelty::sha256_file(dir + "/papers.sqlite"), m.papers_sha256) << dir << ": a mixture";
        if (!m.vectors_sha256.empty())
            EXPECT_EQ(novelty::sha256_file(dir + "/vectors.npy"), m.vectors_sha256) << dir << ": a mixture";
        for (std::size_t r = 0; r < corpus.size(); ++r) state.ids.push_back(corpus.id_and_title(r).first);
        state.vectors_sha256 = m.vectors_sha256;
        std::error_code ec;
        for (fs::directory_iterator it(fs::path(dir) / "cache", ec), end; !ec && it != end; it.increment(ec)) {
            std::size_t q = 0, k = 0, rows = 0;
            const std::string name = it->path().filename().string();
            if (!name.ends_with(".bin") || name.find(".tmp-") != std::string::npos ||
                std::sscanf(name.c_str(), "selfjoin-q%zu-k%zu-rows%zu.bin", &q, &k, &rows) != 3)
                continue;
            novelty::SelfJoin join;
            bool valid = false;
            EXPECT_NO_THROW(valid = novelty::read_self_join(it->path().string(), m.vectors_sha256, rows, q, k, join))
                << it->path() << " is damaged";
            if (valid) state.caches.insert(it->path().filename().string());
        }
        // The density store's segments (named by their contents): every one complete and whole.
        std::vector<std::string> damaged;
        const novelty::DensityStore store(corpus, 1, false, [&](const std::string& m) { damaged.push_back(m); });
        EXPECT_TRUE(damaged.empty()) << dir << ": " << (damaged.empty() ? "" : damaged[0]);
        for (fs::directory_iterator it(fs::path(dir) / "cache", ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.rfind("densities-k", 0) == 0 && name.ends_with(".bin") && name.find(".tmp-") == std::string::npos)
                state.caches.insert(name);
        }
    } catch (const novelty::CorpusError& e) {
        state.refused = true;
        state.why = e.what();
    }
    return state;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

struct Scenario {
    std::string name;
    /// Builds the state before the command in `dir` (a corpus at dir/c, or nothing there).
    std::function<void(const std::string& dir)> before;
    std::string command;  ///< "{C}" = the corpus directory
    std::string rerun;    ///< what finishes the job after a kill
    std::vector<std::string> expected_steps;  ///< steps that must be among those traced
    /// Keeps the corpus open in this process while the command runs (a reader such as a server).
    bool held_open = false;
};

// Runs `command` on the corpus at `corpus`, which this process keeps open meanwhile when `held`.
novelty::test::CliResult run_on(const std::string& command, const std::string& corpus, bool held) {
    std::optional<novelty::Corpus> reader;
    if (held) reader.emplace(novelty::Corpus::open(corpus));
    return run_cli(replace_all(command, "{C}", shell_quote(corpus)));
}

// Runs the command once per step (first and last occurrence) with a kill there.
void run_scenario(const TempDir& tmp, const Scenario& s) {
    SCOPED_TRACE(s.name);
    const std::string template_dir = tmp.file(s.name + "-before");
    fs::create_directories(template_dir);
    s.before(template_dir);
    const State old_state = inspect(template_dir + "/c");

    auto fresh_copy = [&](const std::string& name) {
        const std::string dir = tmp.file(s.name + "-" + name);
        fs::copy(template_dir, dir, fs::copy_options::recursive);
        return dir;
    };
    const std::string reference = fresh_copy("reference");
    const std::string trace = tmp.file(s.name + "-trace.txt");
    ::setenv("NOVELTY_KILL_TRACE", trace.c_str(), 1);
    const auto r = run_on(s.command, reference + "/c", s.held_open);
    ::unsetenv("NOVELTY_KILL_TRACE");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const State new_state = inspect(reference + "/c");
    ASSERT_FALSE(new_state.refused) << new_state.why;
    ASSERT_FALSE(new_state == old_state) << "the command changed nothing";

    std::map<std::string, int> counts;
    std::vector<std::string> order;
    {
        std::istringstream lines(novelty::test::read_file(trace));
        for (std::string step; std::getline(lines, step);)
            if (counts[step]++ == 0) order.push_back(step);
    }
    for (const auto& step : s.expected_steps) EXPECT_TRUE(counts.count(step)) << "step " << step << " never reached";

    int run = 0;
    for (const auto& step : order) {
        for (int occurrence : std::set<int>{1, counts[step]}) {
            const std::string at = step + "#" + std::to_string(occurrence);
            SCOPED_TRACE("killed at " + at);
            const std::string dir = fresh_copy("kill" + std::to_string(run++));
            ::setenv("NOVELTY_KILL_AT", at.c_str(), 1);
            const auto killed = run_on(s.command, dir + "/c", s.held_open);
            ::unsetenv("NOVELTY_KILL_AT");
            EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << "not killed: " << killed.err;
            const State after = inspect(dir + "/c");
            EXPECT_TRUE(after.refused || after.same_corpus_as(old_state) || after.same_corpus_as(new_state))
                << "a mixture: " << after.describe() << "\nold: " << old_state.describe() << "\nnew: " << new_state.describe();
            for (const auto& entry : fs::directory_iterator(dir))
                EXPECT_TRUE(entry.path().filename() == "c") << "left behind after the next open: " << entry.path();
            const auto again = run_cli(replace_all(s.rerun, "{C}", shell_quote(dir + "/c")));
            EXPECT_EQ(again.exit_code, 0) << again.err;
            EXPECT_TRUE(inspect(dir + "/c") == new_state) << "the re-run did not finish the job";
            fs::remove_all(dir);
        }
    }
}

// 12 papers whose dates run backwards (ids prefix + 0..11).
std::string papers(const std::string& prefix) {
    std::string out;
    for (int i = 0; i < 12; ++i)
        out += "{\"id\": \"" + prefix + std::to_string(i) + "\", \"title\": \"Paper " + prefix + std::to_string(i) +
               " on topic " + std::to_string(i * 7 % 5) + "\", \"abstract\": \"About thing " + std::to_string(i) +
               ".\", \"year\": " + std::to_string(2020 - i) + "}\n";
    return out;
}

void import_to(const std::string& in, const std::string& out) {
    const auto r = run_cli("corpus import -q --in " + shell_quote(in) + " --out " + shell_quote(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
}

void attach(const std::string& dir, const std::string& npy) {
    const auto r = run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(npy));
    ASSERT_EQ(r.exit_code, 0) << r.err;
}

/// An OpenAI-compatible /v1/embeddings server whose vectors (dimension 8) depend on the text
/// alone, so that `corpus embed` runs fast and gives the same vectors every time.
class FakeEmbeddingServer {
public:
    FakeEmbeddingServer() {
        server_.Post("/v1/embeddings", [](const httplib::Request& req, httplib::Response& res) {
            const auto body = nlohmann::json::parse(req.body);
            nlohmann::json data = nlohmann::json::array();
            for (std::size_t i = 0; i < body.at("input").size(); ++i) {
                const std::string text = body["input"][i].get<std::string>();
                std::vector<float> v(8);
                std::uint64_t h = 1469598103934665603ull;
                for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
                for (std::size_t d = 0; d < 8; ++d) v[d] = static_cast<float>((h >> (d * 8)) & 0xff) - 127.5f;
                data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
            }
            res.set_content(nlohmann::json{{"object", "list"}, {"data", data}, {"model", body.value("model", "")}}.dump(),
                            "application/json");
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~FakeEmbeddingServer() {
        server_.stop();
        thread_.join();
    }
    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = 0;
};

}  // namespace

TEST(KillTest, ImportLeavesTheOldCorpusTheNewOneOrNone) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), papers("a"));
    novelty::test::write_file(tmp.file("b.jsonl"), papers("b"));
    const auto vectors = novelty::test::random_unit_rows(12, 4, 1);
    novelty::write_npy(tmp.file("v.npy"), novelty::DType::f32, 12, 4, vectors.data());
    const std::string import_b = "corpus import -q --in " + shell_quote(tmp.file("b.jsonl")) + " --out {C}";
    run_scenario(tmp, {"import", [](const std::string&) {}, import_b, import_b + " --overwrite",
                       {"import:papers-written", "rename:manifest.json", "import:built"}});
    run_scenario(tmp,
                 {"overwrite",
                  [&](const std::string& dir) {
                      import_to(tmp.file("a.jsonl"), dir + "/c");
                      attach(dir + "/c", tmp.file("v.npy"));
                  },
                  import_b + " --overwrite", import_b + " --overwrite",
                  {"import:built", "import:between-renames", "import:before-removing-old"}});
}

TEST(KillTest, AddVectorsAndIndexLeaveTheOldStateTheNewOneOrARefusal) {
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), papers("a"));
    const auto v1 = novelty::test::random_unit_rows(12, 4, 1);
    const auto v2 = novelty::test::random_unit_rows(12, 4, 2);
    novelty::write_npy(tmp.file("v1.npy"), novelty::DType::f32, 12, 4, v1.data());
    novelty::write_npy(tmp.file("v2.npy"), novelty::DType::f32, 12, 4, v2.data());
    const std::string add = "corpus add-vectors -q {C} --vectors " + shell_quote(tmp.file("v2.npy"));
    run_scenario(tmp, {"add-vectors",
                       [&](const std::string& dir) {
                           import_to(tmp.file("a.jsonl"), dir + "/c");
                           attach(dir + "/c", tmp.file("v1.npy"));
                           ASSERT_EQ(run_cli("index -q " + shell_quote(dir + "/c") + " --q 3 --extra 1").exit_code, 0);
                       },
                       add, add,
                       {"rename:vectors.npy", "add-vectors:before-removing-caches", "add-vectors:before-renaming-vectors",
                        "add-vectors:before-manifest", "rename:manifest.json"}});
    const std::string index = "index -q {C} --q 3 --extra 1";
    run_scenario(tmp, {"index",
                       [&](const std::string& dir) {
                           import_to(tmp.file("a.jsonl"), dir + "/c");
                           attach(dir + "/c", tmp.file("v1.npy"));
                       },
                       index, index, {"write:selfjoin-q3-k4-rows12.bin", "rename:selfjoin-q3-k4-rows12.bin"}});
}

TEST(KillTest, ScoreLeavesTheOldDensityStoreOrTheNewOne) {
    // score appends the densities it computed to the store as one segment: after a kill the
    // store holds the old segments or the new one too, never part of one.
    TempDir tmp;
    novelty::test::write_file(tmp.file("a.jsonl"), papers("a"));
    novelty::test::write_file(tmp.file("ideas.jsonl"), "{\"id\": \"a3\"}\n{\"id\": \"a7\", \"date\": \"2015\"}\n");
    const auto v1 = novelty::test::random_unit_rows(12, 4, 1);
    novelty::write_npy(tmp.file("v1.npy"), novelty::DType::f32, 12, 4, v1.data());
    const std::string score = "score -q --corpus {C} --ideas " + shell_quote(tmp.file("ideas.jsonl")) +
                              " --p 3 --q 3 --extra 1";
    run_scenario(tmp, {"score",
                       [&](const std::string& dir) {
                           import_to(tmp.file("a.jsonl"), dir + "/c");
                           attach(dir + "/c", tmp.file("v1.npy"));
                       },
                       score, score, {}});
}

TEST(KillTest, CorpusEmbedLeavesTheOldVectorsTheNewOnesOrARefusal) {
    TempDir tmp;
    FakeEmbeddingServer server;
    novelty::test::write_file(tmp.file("a.jsonl"), papers("a"));
    const auto v1 = novelty::test::random_unit_rows(12, 8, 1);
    novelty::write_npy(tmp.file("v1.npy"), novelty::DType::f32, 12, 8, v1.data());
    const std::string embed = "corpus embed -q {C} --batch 5 --embedder " + server.base_url() + " --embed-model fake";
    run_scenario(tmp, {"embed",
                       [&](const std::string& dir) {
                           import_to(tmp.file("a.jsonl"), dir + "/c");
                           attach(dir + "/c", tmp.file("v1.npy"));
                       },
                       embed, embed + " --resume",
                       {"embed:batch-written", "rename:embed.partial.json", "embed:before-attaching",
                        "add-vectors:before-manifest", "embed:before-cleanup"}});

    // novelty embed writes one .npy: after a kill at any of its steps it is absent or whole.
    const std::string records_embed = "embed -q --batch 5 --in " + shell_quote(tmp.file("a.jsonl")) + " --embedder " +
                                      server.base_url() + " --embed-model fake --out ";
    const std::string trace = tmp.file("embed-records-trace.txt");
    ::setenv("NOVELTY_KILL_TRACE", trace.c_str(), 1);
    ASSERT_EQ(run_cli(records_embed + shell_quote(tmp.file("whole.npy"))).exit_code, 0);
    ::unsetenv("NOVELTY_KILL_TRACE");
    const std::string whole = novelty::test::read_file(tmp.file("whole.npy"));
    std::map<std::string, int> counts;
    std::istringstream lines(novelty::test::read_file(trace));
    for (std::string step; std::getline(lines, step);) ++counts[step];
    EXPECT_TRUE(counts.count("rename:killed.npy") || counts.count("rename:whole.npy"));
    for (const auto& [step, count] : counts) {
        const std::string renamed = replace_all(step, "whole.npy", "killed.npy");
        for (int occurrence : std::set<int>{1, count}) {
            const std::string at = renamed + "#" + std::to_string(occurrence);
            SCOPED_TRACE("novelty embed killed at " + at);
            fs::remove(tmp.file("killed.npy"));
            ::setenv("NOVELTY_KILL_AT", at.c_str(), 1);
            EXPECT_EQ(run_cli(records_embed + shell_quote(tmp.file("killed.npy"))).exit_code, 128 + SIGKILL);
            ::unsetenv("NOVELTY_KILL_AT");
            if (fs::exists(tmp.file("killed.npy"))) EXPECT_EQ(novelty::test::read_file(tmp.file("killed.npy")), whole);
        }
    }
}

namespace {

// 12 (or `n`) s2 papers from `first` with dates running backwards, and their vectors.
void s2_files(const std::string& papers_path, const std::string& vectors_path, int first, int n) {
    std::string p, e;
    const auto v = novelty::test::random_unit_rows(static_cast<std::size_t>(n), 4, static_cast<std::uint32_t>(first + 1));
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        p += "{\"corpusid\": " + std::to_string(id) + ", \"title\": \"Paper " + std::to_string(id) + "\", \"year\": " +
             std::to_string(2020 - id % 13) + "}\n";
        e += "{\"corpusid\": " + std::to_string(id) + ", \"model\": \"specter_v2\", \"vector\": \"[";
        for (int d = 0; d < 4; ++d) e += (d ? ", " : "") + std::to_string(v[static_cast<std::size_t>(i * 4 + d)]);
        e += "]\"}\n";
    }
    novelty::test::write_file(papers_path, p);
    novelty::test::write_file(vectors_path, e);
}

}  // namespace

TEST(KillTest, CorpusAddLeavesTheOldCorpusOrTheNewOne) {
    TempDir tmp;
    s2_files(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 12);
    s2_files(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 100, 4);
    const std::string add = "corpus add -q {C} --format s2 --in " + shell_quote(tmp.file("p1.jsonl")) + " " +
                            shell_quote(tmp.file("e1.jsonl"));
    const auto before = [&](const std::string& dir) {
        const auto r = run_cli("corpus import -q --format s2 --in " + shell_quote(tmp.file("p0.jsonl")) + " " +
                               shell_quote(tmp.file("e0.jsonl")) + " --out " + shell_quote(dir + "/c"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        ASSERT_EQ(run_cli("index -q " + shell_quote(dir + "/c") + " --q 3 --extra 1").exit_code, 0);
    };
    // In place: papers.sqlite updated in one transaction, rolled forward or back after a kill.
    run_scenario(tmp, {"corpus-add", before, add, add,
                       {"add:papers-applied", "add:vectors-written", "add:caches-written", "add:intent-written",
                        "add:papers-committed", "add:vectors-moved", "add:cache-moved", "rename:manifest.json",
                        "add:manifest-written"}});
    // The corpus open in another process: the add works on a copy and renames it into place.
    run_scenario(tmp, {"corpus-add-held", before, add, add,
                       {"add:papers-copied", "add:vectors-written", "add:caches-written", "import:built",
                        "import:between-renames", "import:before-removing-old"},
                       true});
}
