// The density store under hostile use (issue 48): two `score` processes and a `serve` computing
// densities into one store at once; `score` killed (SIGKILL, through the NOVELTY_KILL_AT test
// hook) at every write step of a store update that compacts; damaged and truncated store files;
// a store left from a corpus that was since added to, re-embedded or replaced. Each ends with the
// old densities or the new ones, recomputes what is missing, and scores byte for byte as a fresh
// run (the same corpus without its store); a kill never leaves a lock that makes a later run wait.
#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/density_store.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using novelty::test::read_file;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;
using novelty::test::without_densities_path;
using novelty::test::write_file;

namespace {

constexpr int n_papers = 400;

// `n` s2 papers from corpusid `first` (years spread over 1990-2014) with 8-d vectors inline.
void s2_papers(const std::string& path, int first, int n, std::uint32_t seed) {
    const auto v = novelty::test::random_unit_rows(static_cast<std::size_t>(n), 8, seed);
    std::string out;
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        out += "{\"corpusid\": " + std::to_string(id) + ", \"title\": \"Paper " + std::to_string(id) +
               "\", \"year\": " + std::to_string(1990 + id % 25) + "}\n";
    }
    std::string e;
    for (int i = 0; i < n; ++i) {
        e += "{\"corpusid\": " + std::to_string(first + i) + ", \"model\": \"specter_v2\", \"vector\": \"[";
        for (int d = 0; d < 8; ++d) e += (d ? ", " : "") + std::to_string(v[static_cast<std::size_t>(i * 8 + d)]);
        e += "]\"}\n";
    }
    write_file(path + ".papers.jsonl", out);
    write_file(path + ".vectors.jsonl", e);
}

std::string s2_inputs(const std::string& path) {
    return "--format s2 --in " + shell_quote(path + ".papers.jsonl") + " " + shell_quote(path + ".vectors.jsonl");
}

void import_corpus(const TempDir& tmp, const std::string& dir) {
    s2_papers(tmp.file("base"), 0, n_papers, 7);
    const auto r = run_cli("corpus import -q " + s2_inputs(tmp.file("base")) + " --out " + shell_quote(dir));
    ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Ideas that are corpus papers (their vectors, themselves left out) with cutoffs: set `set` of
// several, so that each set reaches papers of its own and some that others reach too. Three
// cutoffs in all, so that no paper needs more lists than a compaction keeps (max_lists_per_row).
std::string ideas_file(const TempDir& tmp, int set, int n = 12) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        const int paper = (set * 37 + i * 13) % n_papers;
        out += "{\"id\": \"" + std::to_string(paper) + "\", \"date\": \"" + std::to_string(2000 + 5 * ((set + i) % 3)) + "\"}\n";
    }
    const std::string path = tmp.file("ideas-" + std::to_string(set) + ".jsonl");
    write_file(path, out);
    return path;
}

// The score command (quiet, or with its summary of densities read and computed on stderr).
std::string score_cmd(const std::string& dir, const std::string& ideas, const std::string& out, bool quiet = true) {
    return std::string(quiet ? "score -q" : "score") + " --corpus " + shell_quote(dir) + " --ideas " + shell_quote(ideas) + " --p 12 --q 5 --threads 2 --out " +
           shell_quote(out);
}

// The scores a fresh run gives: the corpus copied without its store, scored there.
std::string fresh_scores(const TempDir& tmp, const std::string& dir, const std::string& ideas) {
    const std::string copy = tmp.file("fresh-" + std::to_string(::getpid()) + "-" + fs::path(ideas).stem().string());
    fs::remove_all(copy);
    fs::copy(dir, copy, fs::copy_options::recursive);
    fs::remove_all(copy + "/cache");
    const std::string out = copy + "-scores.jsonl";
    const auto r = run_cli(score_cmd(copy, ideas, out));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    fs::remove_all(copy);
    return read_file(out);
}

// The store's files as a reader sees them: the warnings of damaged ones, the segment names.
struct StoreView {
    std::vector<std::string> warnings;
    std::set<std::string> segments;
};

StoreView view_store(const std::string& dir) {
    StoreView view;
    std::set<std::size_t> ks;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(dir) / "cache", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::size_t k = 0;
        if (name.ends_with(".bin") && std::sscanf(name.c_str(), "densities-k%zu-", &k) == 1) {
            view.segments.insert(name);
            ks.insert(k);
        }
    }
    const novelty::Corpus corpus = novelty::Corpus::open(dir);
    for (const std::size_t k : ks)
        const novelty::DensityStore store(corpus, k, false, [&](const std::string& m) { view.warnings.push_back(m); });
    return view;
}

// "N read from the density store, M computed" of a score run's summary on stderr.
std::pair<long, long> read_and_computed(const std::string& err) {
    std::smatch m;
    const std::regex line(R"(neighbour densities: ([0-9,]+) read from the density store, ([0-9,]+) (?:lists )?computed)");
    if (!std::regex_search(err, m, line)) return {-1, -1};
    const auto number = [](std::string s) {
        s.erase(std::remove(s.begin(), s.end(), ','), s.end());
        return std::stol(s);
    };
    return {number(m[1]), number(m[2])};
}

// A `novelty serve` on `dir` (p 12, q 5 as score_cmd), stderr into `log`: its PID and port.
std::pair<pid_t, int> start_server(const std::string& dir, const std::string& log) {
    const pid_t pid = fork();
    if (pid == 0) {
        FILE* err = std::freopen(log.c_str(), "w", stderr);
        (void)err;
        execl(NOVELTY_CLI_PATH, "novelty", "serve", "--corpus", dir.c_str(), "--port", "0", "--threads", "2", "--p", "12",
              "--q", "5", static_cast<char*>(nullptr));
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 6000 && port == 0; ++i) {
        std::smatch m;
        std::string text;
        try {
            text = read_file(log);
        } catch (const std::exception&) {  // not created yet
        }
        if (std::regex_search(text, m, std::regex(R"(http://127\.0\.0\.1:(\d+))"))) port = std::stoi(m[1]);
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {pid, port};
}

// Stops a server with SIGTERM; true when it exited cleanly.
bool stop_server(pid_t pid) {
    ::kill(pid, SIGTERM);
    int status = 0;
    return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

// Two `score` processes and a server fill one store at once, over several rounds, so that
// appends meet compactions (a compaction runs past 8 segments). Every run's scores are a fresh
// run's; afterwards the store holds no damaged file and serves all of it again.
TEST(DensityStoreHostile, TwoScoresAndAServerFillOneStoreAtOnce) {
    TempDir tmp;
    const std::string dir = tmp.file("c");
    import_corpus(tmp, dir);
    const auto started = start_server(dir, tmp.file("serve.log"));
    const pid_t server = started.first;
    const int port = started.second;
    ASSERT_GT(port, 0);
    // The server's requests: each idea alone, so that each is a store append of its own.
    std::vector<std::string> bodies;
    for (int i = 0; i < 40; ++i)
        bodies.push_back(R"({"ideas": [{"id": ")" + std::to_string((i * 29 + 5) % n_papers) + R"(", "date": ")" +
                         std::to_string(1995 + i % 20) + R"("}]})");
    std::vector<std::string> replies(bodies.size());
    // Five rounds of two appends: past max_segments, so later appends compact while others run.
    for (int round = 0; round < 5; ++round) {
        const int a = round * 2 + 1, b = round * 2 + 2;
        const std::string out_a = tmp.file("a" + std::to_string(round) + ".jsonl"), out_b = tmp.file("b" + std::to_string(round) + ".jsonl");
        novelty::test::CliResult ra, rb;
        const std::string ideas_a = ideas_file(tmp, a, 30), ideas_b = ideas_file(tmp, b, 30);
        std::thread ta([&] { ra = run_cli(score_cmd(dir, ideas_a, out_a)); });
        std::thread tb([&] { rb = run_cli(score_cmd(dir, ideas_b, out_b)); });
        std::thread tc([&] {
            httplib::Client http("127.0.0.1", port);
            http.set_read_timeout(120);
            for (std::size_t i = round * 8; i < round * 8 + 8; ++i) {
                auto reply = http.Post("/v1/score", bodies[i], "application/json");
                replies[i] = reply ? std::to_string(reply->status) + " " + reply->body : "no reply";
            }
        });
        ta.join();
        tb.join();
        tc.join();
        ASSERT_EQ(ra.exit_code, 0) << ra.err;
        ASSERT_EQ(rb.exit_code, 0) << rb.err;
        EXPECT_EQ(without_densities_path(read_file(out_a)), without_densities_path(fresh_scores(tmp, dir, ideas_a))) << "round " << round;
        EXPECT_EQ(without_densities_path(read_file(out_b)), without_densities_path(fresh_scores(tmp, dir, ideas_b))) << "round " << round;
    }
    EXPECT_TRUE(stop_server(server)) << read_file(tmp.file("serve.log"));
    const StoreView view = view_store(dir);
    EXPECT_TRUE(view.warnings.empty()) << view.warnings[0];
    EXPECT_LT(view.segments.size(), 10u) << "a compaction ran (ten appends)";
    // No append was lost to a compaction running beside it: every set reads all its densities.
    for (int set = 1; set <= 10; ++set) {
        const auto again = run_cli(score_cmd(dir, tmp.file("ideas-" + std::to_string(set) + ".jsonl"), tmp.file("again.jsonl"), false));
        ASSERT_EQ(again.exit_code, 0) << again.err;
        EXPECT_EQ(read_and_computed(again.err).second, 0) << "set " << set << ": " << again.err;
    }
    // The server's replies equal a fresh server's (a corpus copy without its store).
    const std::string fresh = tmp.file("fresh-served");
    fs::copy(dir, fresh, fs::copy_options::recursive);
    fs::remove_all(fresh + "/cache");
    const auto [fresh_server, fresh_port] = start_server(fresh, tmp.file("fresh.log"));
    ASSERT_GT(fresh_port, 0);
    httplib::Client http("127.0.0.1", fresh_port);
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        auto reply = http.Post("/v1/score", bodies[i], "application/json");
        ASSERT_TRUE(reply);
        EXPECT_EQ(without_densities_path(replies[i]), without_densities_path(std::to_string(reply->status) + " " + reply->body))
            << bodies[i];
    }
    EXPECT_TRUE(stop_server(fresh_server));
}

// A store of 8 segments, and a score whose append makes a 9th and so compacts them: killed at
// every step (each write and rename of the appended and the merged segment, between the merge
// and each removal), the store is the old one, the old one with the new segment, or the merged
// one beside some of what it merged; no file is damaged, and the next run finishes without
// waiting on the dead process's compaction lock and scores as a fresh run.
TEST(DensityStoreHostile, KilledAtEveryStepOfACompactingUpdateTheStoreIsOldOrNew) {
    TempDir tmp;
    const std::string before = tmp.file("before");
    import_corpus(tmp, before);
    for (int set = 1; set <= 8; ++set) {
        const auto r = run_cli(score_cmd(before, ideas_file(tmp, set, 4), tmp.file("warm.jsonl")));
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_EQ(view_store(before).segments.size(), novelty::DensityStore::max_segments) << "one segment per run";
    const std::string ideas = ideas_file(tmp, 40, 6);
    const std::string fresh = fresh_scores(tmp, before, ideas);

    const std::string reference = tmp.file("reference");
    fs::copy(before, reference, fs::copy_options::recursive);
    const std::string trace = tmp.file("trace.txt");
    ::setenv("NOVELTY_KILL_TRACE", trace.c_str(), 1);
    const auto traced = run_cli(score_cmd(reference, ideas, tmp.file("reference.jsonl")));
    ::unsetenv("NOVELTY_KILL_TRACE");
    ASSERT_EQ(traced.exit_code, 0) << traced.err;
    EXPECT_EQ(without_densities_path(read_file(tmp.file("reference.jsonl"))), without_densities_path(fresh));
    EXPECT_EQ(view_store(reference).segments.size(), 1u) << "the update compacted the store into one segment";
    std::map<std::string, int> counts;
    std::vector<std::string> order;
    std::istringstream lines(read_file(trace));
    for (std::string step; std::getline(lines, step);)
        if (step.find("densities") != std::string::npos && counts[step]++ == 0) order.push_back(step);
    ASSERT_TRUE(counts.count("densities:merged") && counts.count("densities:removed")) << read_file(trace);

    int run = 0;
    for (const std::string& step : order) {
        for (const int occurrence : std::set<int>{1, counts[step]}) {
            const std::string at = step + "#" + std::to_string(occurrence);
            SCOPED_TRACE("killed at " + at);
            const std::string dir = tmp.file("kill" + std::to_string(run++));
            fs::copy(before, dir, fs::copy_options::recursive);
            ::setenv("NOVELTY_KILL_AT", at.c_str(), 1);
            const auto killed = run_cli(score_cmd(dir, ideas, dir + "-killed.jsonl"));
            ::unsetenv("NOVELTY_KILL_AT");
            EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << "not killed: " << killed.err;
            const StoreView after = view_store(dir);
            EXPECT_TRUE(after.warnings.empty()) << after.warnings[0];
            const auto again = run_cli(score_cmd(dir, ideas, dir + "-again.jsonl"));
            ASSERT_EQ(again.exit_code, 0) << again.err;
            EXPECT_EQ(without_densities_path(read_file(dir + "-again.jsonl")), without_densities_path(fresh));
            EXPECT_TRUE(view_store(dir).warnings.empty());
            fs::remove_all(dir);
        }
    }
}

namespace {

// Damages of a store file: each returns a description and changes `path` in place.
void truncate_to(const std::string& path, std::uintmax_t bytes) { fs::resize_file(path, bytes); }
void flip_byte(const std::string& path, std::uintmax_t at) {
    std::string bytes = read_file(path);
    bytes[static_cast<std::size_t>(at)] = static_cast<char>(bytes[static_cast<std::size_t>(at)] ^ 0x5a);
    write_file(path, bytes);
}

std::string only_segment(const std::string& dir) {
    const StoreView view = view_store(dir);
    EXPECT_EQ(view.segments.size(), 1u);
    return view.segments.empty() ? "" : dir + "/cache/" + *view.segments.begin();
}

}  // namespace

// A segment truncated (to half, to its header, to nothing), with a byte changed (in the lists, in
// its checksum) or with bytes added: the run says the store is damaged, computes those densities
// again, scores as a fresh run, and stores them again (the run after reads them all).
TEST(DensityStoreHostile, DamagedOrTruncatedStoreFilesAreComputedAgain) {
    TempDir tmp;
    const std::string before = tmp.file("before");
    import_corpus(tmp, before);
    const std::string ideas = ideas_file(tmp, 3, 8);
    ASSERT_EQ(run_cli(score_cmd(before, ideas, tmp.file("first.jsonl"))).exit_code, 0);
    const std::string fresh = read_file(tmp.file("first.jsonl"));
    const std::uintmax_t size = fs::file_size(only_segment(before));
    const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> damages = {
        {"truncated to half", [&](const std::string& p) { truncate_to(p, size / 2); }},
        {"truncated to its header", [&](const std::string& p) { truncate_to(p, 64); }},
        {"empty", [&](const std::string& p) { truncate_to(p, 0); }},
        {"a byte of the lists changed", [&](const std::string& p) { flip_byte(p, size / 2); }},
        {"a byte of the checksum changed", [&](const std::string& p) { flip_byte(p, size - 3); }},
        {"bytes added", [&](const std::string& p) { write_file(p, read_file(p) + "extra"); }},
    };
    int run = 0;
    for (const auto& [what, damage] : damages) {
        SCOPED_TRACE(what);
        const std::string dir = tmp.file("damaged" + std::to_string(run++));
        fs::copy(before, dir, fs::copy_options::recursive);
        damage(only_segment(dir));
        const auto r = run_cli(score_cmd(dir, ideas, dir + ".jsonl", false));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(without_densities_path(read_file(dir + ".jsonl")), without_densities_path(fresh));
        EXPECT_GT(read_and_computed(r.err).second, 0) << r.err;
        const auto again = run_cli(score_cmd(dir, ideas, dir + "-again.jsonl", false));
        ASSERT_EQ(again.exit_code, 0) << again.err;
        EXPECT_EQ(without_densities_path(read_file(dir + "-again.jsonl")), without_densities_path(fresh));
        EXPECT_EQ(read_and_computed(again.err).second, 0) << "stored again: " << again.err;
    }
}

// A store left from before the corpus changed: papers added (the store carried over, renumbered),
// vectors replaced (the segments are of other vectors), a store copied from another corpus with
// the same papers, the corpus replaced by an import. Each scores as a fresh run.
TEST(DensityStoreHostile, AStoreFromBeforeTheCorpusChangedScoresAsAFreshRun) {
    TempDir tmp;
    const std::string dir = tmp.file("c");
    import_corpus(tmp, dir);
    const std::string ideas = ideas_file(tmp, 5, 10);
    ASSERT_EQ(run_cli(score_cmd(dir, ideas, tmp.file("s0.jsonl"))).exit_code, 0);
    // Papers added, dated among the old ones.
    s2_papers(tmp.file("more"), 1000, 30, 11);
    auto r = run_cli("corpus add -q " + shell_quote(dir) + " " + s2_inputs(tmp.file("more")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(score_cmd(dir, ideas, tmp.file("s1.jsonl"), false));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(without_densities_path(read_file(tmp.file("s1.jsonl"))), without_densities_path(fresh_scores(tmp, dir, ideas))) << "after the add";
    EXPECT_GT(read_and_computed(r.err).first, 0) << "the carried lists served: " << r.err;
    // The same papers with other vectors: a corpus built alike but for its vectors.
    const std::string other = tmp.file("other");
    s2_papers(tmp.file("base"), 0, n_papers, 99);
    s2_papers(tmp.file("more"), 1000, 30, 98);
    ASSERT_EQ(run_cli("corpus import -q " + s2_inputs(tmp.file("base")) + " --out " + shell_quote(other)).exit_code, 0);
    ASSERT_EQ(run_cli("corpus add -q " + shell_quote(other) + " " + s2_inputs(tmp.file("more"))).exit_code, 0);
    fs::remove_all(other + "/cache");
    fs::copy(dir + "/cache", other + "/cache", fs::copy_options::recursive);
    r = run_cli(score_cmd(other, ideas, tmp.file("s2.jsonl"), false));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(without_densities_path(read_file(tmp.file("s2.jsonl"))), without_densities_path(fresh_scores(tmp, other, ideas))) << "a store of other vectors";
    EXPECT_EQ(read_and_computed(r.err).first, 0) << "nothing of the other vectors' store served: " << r.err;
    // The corpus replaced by an import (the other corpus's papers and vectors).
    s2_papers(tmp.file("base"), 0, n_papers, 99);
    r = run_cli("corpus import -q " + s2_inputs(tmp.file("base")) + " --out " + shell_quote(dir) + " --overwrite");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(score_cmd(dir, ideas, tmp.file("s3.jsonl"), false));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(without_densities_path(read_file(tmp.file("s3.jsonl"))), without_densities_path(fresh_scores(tmp, dir, ideas))) << "after the import";
}
