// add_papers: new rows in date order (renumbering), replacements and deletions, vectors carried
// over, and the density cache updated to exactly what a full `novelty index` computes.
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/corpus_add.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/util/dates.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/error.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace novelty;
using novelty::test::TempDir;

namespace {

// S2-shaped papers ids [first, first + n) dated 2000 + (id % 20), and their vectors (seed).
void write_s2(const std::string& papers, const std::string& vectors, int first, int n, std::uint32_t seed,
              const std::string& title_prefix = "Paper") {
    const auto v = test::random_unit_rows(static_cast<std::size_t>(n), 16, seed);
    std::string p, e;
    for (int i = 0; i < n; ++i) {
        const int id = first + i;
        p += nlohmann::json{{"corpusid", id}, {"title", title_prefix + " " + std::to_string(id)},
                            {"publicationdate", std::to_string(2000 + id % 20) + "-01-01"},
                            {"externalids", {{"DOI", "10.5/" + std::to_string(id)}}}}.dump() + "\n";
        std::string vec = "[";
        for (std::size_t d = 0; d < 16; ++d) vec += (d ? ", " : "") + std::to_string(v[static_cast<std::size_t>(i) * 16 + d]);
        e += nlohmann::json{{"corpusid", id}, {"model", "specter_v2"}, {"vector", vec + "]"}}.dump() + "\n";
    }
    test::write_file(papers, p);
    test::write_file(vectors, e);
}

void import_s2(const std::vector<std::string>& files, const std::string& out) {
    ImportOptions o;
    for (const auto& f : files) o.sources.push_back({f, ImportFormat::s2, ""});
    o.out_dir = out;
    import_corpus(o);
}

SelfJoin index(const std::string& dir, std::size_t q, std::size_t k) {
    const Corpus corpus = Corpus::open(dir);
    auto idx = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    return cached_self_join(corpus, *idx, corpus.size(), q, k);
}

}  // namespace

TEST(CorpusAdd, UpdatesTheDensityCacheToWhatAFullIndexGives) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 400, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    index(tmp.file("c"), 10, 14);
    // New papers dated among the old ones (rows renumbered), and two old papers replaced.
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 400, 40, 2);
    write_s2(tmp.file("p2.jsonl"), tmp.file("e2.jsonl"), 17, 2, 3, "Revised paper");
    AddPapersOptions options;
    for (const char* f : {"p1.jsonl", "e1.jsonl", "p2.jsonl", "e2.jsonl"})
        options.sources.push_back({tmp.file(f), ImportFormat::s2, ""});
    const AddPapersSummary s = add_papers(tmp.file("c"), options);
    EXPECT_EQ(s.n_papers, 440u);
    EXPECT_EQ(s.n_added, 42u);
    EXPECT_EQ(s.n_removed, 2u);
    ASSERT_TRUE(s.first_renumbered_row);
    ASSERT_EQ(s.caches_updated.size(), 1u);
    EXPECT_LT(s.rows_searched, 440u);  // not a full recomputation

    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.paper(*corpus.find_row("17")).title, "Revised paper 17");
    EXPECT_EQ(corpus.find_row("doi:10.5/405"), corpus.find_row("405"));
    for (std::size_t r = 1; r < corpus.size(); ++r) EXPECT_LE(corpus.paper(r - 1).sort_date, corpus.paper(r).sort_date);
    ASSERT_EQ(corpus.manifest().updates.size(), 1u);
    EXPECT_EQ(corpus.manifest().updates[0].first_renumbered_row, static_cast<std::int64_t>(*s.first_renumbered_row));
    SelfJoin updated;
    ASSERT_TRUE(read_self_join(self_join_cache_path(corpus, 440, 10, 14), corpus.manifest().vectors_sha256, 440, 10, 14,
                               updated));
    auto idx = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    const SelfJoin full = idx->self_join(440, 10, 14);
    EXPECT_EQ(updated.rows, full.rows);
    EXPECT_EQ(updated.sims, full.sims);
    for (std::size_t r = 0; r < 440; ++r) ASSERT_EQ(updated.density[r], full.density[r]) << r;
    // Every kept paper kept its vector.
    const Corpus fresh_copy = Corpus::open(tmp.file("c"));
    float a[16];
    fresh_copy.vectors().row_as_f32(*fresh_copy.find_row("3"), a);
    const auto v = test::random_unit_rows(400, 16, 1);
    for (std::size_t d = 0; d < 16; ++d) EXPECT_NEAR(a[d], v[3 * 16 + d], 1e-5);
}

TEST(CorpusAdd, NewPapersWithoutVectorsNeedTheEmbedderAndNothingChanges) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 30, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    const std::string before = test::read_file(tmp.file("c/manifest.json"));
    test::write_file(tmp.file("new.jsonl"), R"({"id": "n1", "title": "A new paper", "year": 2024})" "\n");
    AddPapersOptions options;
    options.sources.push_back({tmp.file("new.jsonl"), ImportFormat::jsonl, ""});
    try {
        add_papers(tmp.file("c"), options);
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("1 new papers have no vector"), std::string::npos) << e.what();
    }
    EXPECT_EQ(test::read_file(tmp.file("c/manifest.json")), before);
    for (const auto& entry : std::filesystem::directory_iterator(tmp.path()))
        EXPECT_EQ(entry.path().filename().string().find(".importing-"), std::string::npos) << entry.path();
}

TEST(CorpusAdd, PubmedUpdatesDeleteFromTheCorpusAndMissingOnesAreNamed) {
    TempDir tmp;
    ImportOptions o;
    o.sources.push_back({test::fixture("import/pubmed/pubmed-baseline-0001.xml.gz"), ImportFormat::pubmed, ""});
    o.out_dir = tmp.file("c");
    import_corpus(o);
    AddPapersOptions options;
    options.sources.push_back({test::fixture("import/pubmed/pubmed-update-0002.xml"), ImportFormat::pubmed, ""});
    const AddPapersSummary s = add_papers(tmp.file("c"), options);
    EXPECT_EQ(s.n_papers, 3u);
    EXPECT_EQ(s.n_removed, 2u);  // 101 replaced, 102 deleted
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_FALSE(corpus.find_row("102"));
    EXPECT_EQ(corpus.paper(*corpus.find_row("101")).abstract, "Sleep consolidates declarative memory.");
    // Deleting 102 again: it is not there any more.
    try {
        add_papers(tmp.file("c"), options);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("DeleteCitation names PMID '102'"), std::string::npos) << e.what();
        EXPECT_EQ(e.line(), 54u) << e.what();
    }
}

TEST(CorpusAdd, PrefixAndDamagedCachesAreDroppedNotCarriedOver) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 60, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    {
        const Corpus corpus = Corpus::open(tmp.file("c"));
        auto idx = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
        cached_self_join(corpus, *idx, 60, 5, 7);  // the whole corpus
        cached_self_join(corpus, *idx, 30, 5, 7);  // a row prefix (a --cutoff)
        cached_self_join(corpus, *idx, 60, 3, 4);  // the whole corpus, damaged below
        const std::string damaged = self_join_cache_path(corpus, 60, 3, 4);
        std::string bytes = test::read_file(damaged);
        bytes[bytes.size() / 2] ^= 1;
        test::write_file(damaged, bytes);
    }
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 60, 3, 2);
    AddPapersOptions options;
    for (const char* f : {"p1.jsonl", "e1.jsonl"}) options.sources.push_back({tmp.file(f), ImportFormat::s2, ""});
    const AddPapersSummary s = add_papers(tmp.file("c"), options);
    EXPECT_EQ(s.caches_updated, std::vector<std::string>{"selfjoin-q5-k7-rows63.bin"});
    std::vector<std::string> dropped = s.caches_dropped;
    std::sort(dropped.begin(), dropped.end());
    EXPECT_EQ(dropped, (std::vector<std::string>{"selfjoin-q3-k4-rows60.bin", "selfjoin-q5-k7-rows30.bin"}));
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(tmp.file("c/cache"))) files.push_back(e.path().filename());
    EXPECT_EQ(files, std::vector<std::string>{"selfjoin-q5-k7-rows63.bin"});
}

namespace {

AddPapersOptions s2_add(const TempDir& tmp, const std::vector<std::string>& files, std::size_t* notes = nullptr) {
    AddPapersOptions options;
    for (const auto& f : files) options.sources.push_back({tmp.file(f), ImportFormat::s2, ""});
    if (notes) options.on_duplicate = [notes](const SkippedRecord&) { ++*notes; };
    return options;
}

// Row `row` of the corpus's vectors, and whether it is `expected` (dim 16) to within 1e-5.
bool vector_is(const Corpus& corpus, std::size_t row, const float* expected) {
    float a[16];
    corpus.vectors().row_as_f32(row, a);
    for (std::size_t d = 0; d < 16; ++d)
        if (std::abs(a[d] - expected[d]) > 1e-5f) return false;
    return true;
}

void expect_cache_is_a_full_index(const std::string& dir, std::size_t q, std::size_t k) {
    const Corpus corpus = Corpus::open(dir);
    SelfJoin updated;
    ASSERT_TRUE(read_self_join(self_join_cache_path(corpus, corpus.size(), q, k), corpus.manifest().vectors_sha256,
                               corpus.size(), q, k, updated));
    auto idx = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    const SelfJoin full = idx->self_join(corpus.size(), q, k);
    EXPECT_EQ(updated.rows, full.rows);
    EXPECT_EQ(updated.sims, full.sims);
}

}  // namespace

// An s2 embeddings line alone, for a paper of the corpus: the paper's vector is replaced (a
// revision of its vector, its record kept), said in the summary, and the cache follows.
TEST(CorpusAdd, AnS2VectorAloneForAPaperOfTheCorpusReplacesItsVector) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 60, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    index(tmp.file("c"), 5, 7);
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 17, 1, 9);  // (only its vector line is given)
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add(tmp, {"e1.jsonl"}));
    EXPECT_EQ(s.n_vectors_replaced, 1u);
    EXPECT_EQ(s.n_added, 1u);
    EXPECT_EQ(s.n_removed, 1u);
    EXPECT_EQ(s.n_papers, 60u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    const std::size_t row = *corpus.find_row("17");
    EXPECT_EQ(corpus.paper(row).title, "Paper 17");
    EXPECT_EQ(corpus.find_row("doi:10.5/17"), row);  // its other names kept
    EXPECT_TRUE(vector_is(corpus, row, test::random_unit_rows(1, 16, 9).data())) << "the old vector was kept";
    EXPECT_TRUE(vector_is(corpus, *corpus.find_row("18"), test::random_unit_rows(60, 16, 1).data() + 18 * 16));
    ASSERT_EQ(corpus.manifest().updates.size(), 1u);
    expect_cache_is_a_full_index(tmp.file("c"), 5, 7);
}

// An s2 papers record revising a paper of the corpus, given without a vector (while other papers
// of the add have theirs): the paper stays a row with its old vector, not listed as unembedded.
TEST(CorpusAdd, AnS2RevisionWithoutAVectorKeepsThePaperAndItsVector) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 60, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 60, 2, 2);
    write_s2(tmp.file("p2.jsonl"), tmp.file("e2.jsonl"), 17, 1, 3, "Revised paper");
    const AddPapersSummary s = add_papers(tmp.file("c"), s2_add(tmp, {"p1.jsonl", "e1.jsonl", "p2.jsonl"}));
    EXPECT_EQ(s.n_vectors_kept, 1u);
    EXPECT_EQ(s.n_papers, 62u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    ASSERT_TRUE(corpus.find_row("17").has_value()) << "the revised paper left the rows";
    EXPECT_EQ(corpus.paper(*corpus.find_row("17")).title, "Revised paper 17");
    EXPECT_TRUE(vector_is(corpus, *corpus.find_row("17"), test::random_unit_rows(60, 16, 1).data() + 17 * 16));
    EXPECT_EQ(corpus.manifest().n_unembedded, 0u);
}

// The same s2 records again (papers, with or without their abstracts, and vectors): nothing
// changes, each is dropped with a note, and no update is recorded; through a rebuild too.
TEST(CorpusAdd, IdenticalS2RecordsAreDroppedAndChangeNothing) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 60, 1);
    test::write_file(tmp.file("a0.jsonl"), R"({"corpusid": 3, "abstract": "About three"})" "\n"
                                           R"({"corpusid": 17, "abstract": "About seventeen"})" "\n");
    import_s2({tmp.file("p0.jsonl"), tmp.file("a0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    const std::vector<std::vector<std::string>> again{
        {"p0.jsonl", "e0.jsonl"}, {"p0.jsonl", "a0.jsonl", "e0.jsonl"}, {"p0.jsonl"}, {"e0.jsonl"}};
    for (const auto& files : again) {
        std::size_t notes = 0;
        const AddPapersSummary s = add_papers(tmp.file("c"), s2_add(tmp, files, &notes));
        EXPECT_EQ(s.n_added, 0u) << files.size();
        EXPECT_EQ(s.n_removed, 0u) << files.size();
        EXPECT_EQ(s.n_vectors_replaced, 0u) << files.size();
        EXPECT_FALSE(s.first_renumbered_row) << files.size();
        EXPECT_GE(notes, 60u) << files.size();
    }
    EXPECT_TRUE(Corpus::open(tmp.file("c")).manifest().updates.empty()) << "an update recorded, though nothing changed";
    // An abstract for an old paper alone makes the add a rebuild (which fills it in the kept
    // row): the identical records change nothing there either.
    test::write_file(tmp.file("a1.jsonl"), R"({"corpusid": 5, "abstract": "About five"})" "\n");
    const AddPapersSummary rebuilt = add_papers(tmp.file("c"), s2_add(tmp, {"p0.jsonl", "a1.jsonl"}));
    EXPECT_TRUE(rebuilt.rebuilt);
    EXPECT_EQ(rebuilt.n_added, 0u);
    EXPECT_EQ(rebuilt.n_removed, 0u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.size(), 60u);
    EXPECT_EQ(corpus.paper(*corpus.find_row("3")).abstract, "About three");
    EXPECT_EQ(corpus.paper(*corpus.find_row("17")).abstract, "About seventeen");
    EXPECT_EQ(corpus.paper(*corpus.find_row("5")).abstract, "About five");
    // An identical papers record with a changed vector replaces the vector, and that alone.
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 9, 1, 4);
    const AddPapersSummary one = add_papers(tmp.file("c"), s2_add(tmp, {"p0.jsonl", "e1.jsonl"}));
    EXPECT_EQ(one.n_added, 1u);
    EXPECT_EQ(one.n_removed, 1u);
    const Corpus changed = Corpus::open(tmp.file("c"));
    EXPECT_TRUE(vector_is(changed, *changed.find_row("9"), test::random_unit_rows(1, 16, 4).data()));
    EXPECT_EQ(changed.manifest().updates.size(), 2u);  // the rebuild's and this one's
}

namespace {

// Ideas at the whole corpus and at date cutoffs (row limits of `corpus`), a few exclusions.
std::vector<IdeaScore> score_ideas(const Corpus& corpus, const std::vector<float>& ideas, bool full,
                                   DensityCounts* counts = nullptr) {
    ScoreInput input{ideas.data(), ideas.size() / 16, 16, {}, {}, {}};
    for (std::size_t i = 0; i < input.n_ideas; ++i) {
        input.row_limit.push_back(i % 3 == 0 ? corpus.size()
                                             : corpus.rows_through(*parse_date(std::to_string(2006 + i % 13))));
        input.excluded.add({static_cast<std::int64_t>(i * 7 % 100)});
    }
    ScoreOptions options;
    options.p = 12;
    options.q = 6;
    options.densities = full ? DensityMethod::self_join : DensityMethod::on_demand;
    auto idx = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *idx, options);
    auto scores = scorer.score(input);
    if (counts) *counts = scorer.density_counts();
    return scores;
}

}  // namespace

TEST(CorpusAdd, CarriesTheDensityStoreOverAndItsDensitiesStayExact) {
    TempDir tmp;
    write_s2(tmp.file("p0.jsonl"), tmp.file("e0.jsonl"), 0, 400, 1);
    import_s2({tmp.file("p0.jsonl"), tmp.file("e0.jsonl")}, tmp.file("c"));
    const auto ideas = test::random_unit_rows(30, 16, 9);
    DensityCounts before;
    score_ideas(Corpus::open(tmp.file("c")), ideas, false, &before);
    ASSERT_GT(before.computed, 0u);
    // New papers dated among the old ones (rows renumbered), and two old papers replaced.
    write_s2(tmp.file("p1.jsonl"), tmp.file("e1.jsonl"), 400, 40, 2);
    write_s2(tmp.file("p2.jsonl"), tmp.file("e2.jsonl"), 17, 2, 3, "Revised paper");
    AddPapersOptions options;
    for (const char* f : {"p1.jsonl", "e1.jsonl", "p2.jsonl", "e2.jsonl"})
        options.sources.push_back({tmp.file(f), ImportFormat::s2, ""});
    const AddPapersSummary s = add_papers(tmp.file("c"), options);
    EXPECT_GT(s.density_lists_kept, 0u);
    EXPECT_EQ(s.density_lists_kept + s.density_lists_dropped, before.computed);
    std::filesystem::copy(tmp.file("c"), tmp.file("reference"), std::filesystem::copy_options::recursive);
    std::filesystem::remove_all(tmp.file("reference/cache"));
    DensityCounts after;
    const auto got = score_ideas(Corpus::open(tmp.file("c")), ideas, false, &after);
    const auto want = score_ideas(Corpus::open(tmp.file("reference")), ideas, true);
    EXPECT_GT(after.served, 0u) << "carried lists serve the same ideas after the add";
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].neighbor_rows, want[i].neighbor_rows) << "idea " << i;
        EXPECT_EQ(got[i].neighbor_nd, want[i].neighbor_nd) << "idea " << i;
        EXPECT_EQ(got[i].rnd, want[i].rnd) << "idea " << i;
    }
}
