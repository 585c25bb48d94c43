// Densities on demand from the density store against the full self-join path (the reference),
// bit for bit, with random per-idea cutoffs, exclusions (some beyond the stored extras),
// --include-self, metadata filters and exact ties; reuse across runs (a second run computes
// nothing), lists served from longer prefixes, damaged segments, compaction, a read-only store,
// and the self-join caches of `novelty index` serving as stored lists.
#include "novelty/corpus/corpus.hpp"
#include "novelty/scoring/density_store.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/backends.hpp"
#include "scoring_corpus.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>

using namespace novelty;
using novelty::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t n_papers = 360, dim = 10;

/// Random unit rows with exact ties: every 11th row copied 5 rows later.
std::vector<float> tied_rows() {
    auto rows = test::random_unit_rows(n_papers, dim, 31);
    for (std::size_t i = 0; i + 5 < n_papers; i += 11) std::copy_n(rows.begin() + i * dim, dim, rows.begin() + (i + 5) * dim);
    return rows;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Scores, neighbours and densities bit for bit; `got_by`: the backend got's densities name ("" for
/// want's).
void expect_identical(const std::vector<IdeaScore>& got, const std::vector<IdeaScore>& want, const std::string& what,
                      const std::string& got_by = "") {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const IdeaScore &a = got[i], &b = want[i];
        EXPECT_TRUE(same_bits(a.rnd, b.rnd) && same_bits(a.nd, b.nd) && same_bits(a.hd, b.hd) &&
                    same_bits(a.density_p, b.density_p) && same_bits(a.rnd_euclid, b.rnd_euclid) &&
                    same_bits(a.rel_hd, b.rel_hd) && same_bits(a.rnd_hd, b.rnd_hd))
            << what << " idea " << i;
        EXPECT_EQ(a.on.has_value(), b.on.has_value());
        if (a.on && b.on) {
            EXPECT_TRUE(same_bits(*a.on, *b.on)) << what << " idea " << i;
        }
        EXPECT_EQ(a.neighbor_rows, b.neighbor_rows) << what << " idea " << i;
        EXPECT_EQ(a.neighbor_sims, b.neighbor_sims) << what << " idea " << i;
        ASSERT_EQ(a.neighbor_nd.size(), b.neighbor_nd.size());
        for (std::size_t r = 0; r < a.neighbor_nd.size(); ++r)
            EXPECT_TRUE(same_bits(a.neighbor_nd[r], b.neighbor_nd[r])) << what << " idea " << i << " neighbour " << r;
        EXPECT_EQ(a.searchable, b.searchable);
        EXPECT_EQ(a.densities_by, got_by.empty() ? b.densities_by : got_by) << what;
    }
}

/// Ideas: random unit vectors and corpus rows (ties with the corpus), each with a random row
/// limit, exclusions (a third of them more than `extra` of their nearest papers), and for every
/// fourth idea a metadata filter of random rows.
struct Ideas {
    std::vector<float> vectors;
    ScoreInput input;
};

Ideas make_ideas(const std::vector<float>& corpus_rows, std::size_t n_ideas, std::uint32_t seed, std::size_t min_limit) {
    Ideas ideas;
    ideas.vectors = test::random_unit_rows(n_ideas, dim, seed);
    std::mt19937 rng(seed);
    for (std::size_t i = 0; i < n_ideas; i += 5)  // some ideas are corpus papers' vectors
        std::copy_n(corpus_rows.begin() + (rng() % n_papers) * dim, dim, ideas.vectors.begin() + i * dim);
    ScoreInput& in = ideas.input;
    in.n_ideas = n_ideas;
    in.dim = dim;
    const VectorView view{corpus_rows.data(), DType::f32, n_papers, dim};
    for (std::size_t i = 0; i < n_ideas; ++i) {
        const std::size_t limit = i % 6 == 0 ? n_papers : min_limit + rng() % (n_papers - min_limit);
        in.row_limit.push_back(limit);
        std::vector<std::int64_t> excluded;
        if (i % 3 == 1) {  // many of its nearest: beyond the stored extras of its neighbours' lists
            const auto near = test::reference_topk(view, ideas.vectors.data() + i * dim, limit, {}, 60);
            for (std::size_t r = 0; r < near.size(); r += 2) excluded.push_back(near[r].row);
        } else if (i % 3 == 2) {
            for (int e = 0; e < 3; ++e) excluded.push_back(static_cast<std::int64_t>(rng() % limit));
        }
        in.excluded.add(excluded);
        auto filter = std::make_shared<RowFilter>(RowFilter::none(n_papers));
        for (std::size_t r = 0; r < n_papers; ++r)
            if (i % 4 != 3 || rng() % 3 != 0) filter->allow(r);
        in.filters.push_back(filter);
    }
    in.vectors = ideas.vectors.data();
    return ideas;
}

std::vector<IdeaScore> score_with(const Corpus& corpus, const ScoreOptions& options, const ScoreInput& input,
                                  DensityCounts* counts = nullptr, CpuStorage storage = CpuStorage::f32) {
    CpuBackendOptions cpu;
    cpu.storage = storage;
    auto backend = make_cpu_backend(cpu);
    backend->tuning.query_tile = 16;  // several query blocks in every search
    const auto index = backend->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *index, options);
    auto scores = scorer.score(input);
    if (counts) *counts = scorer.density_counts();
    return scores;
}

std::size_t files_named(const std::string& dir, const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir + "/cache"))
        n += entry.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
}

}  // namespace

// On demand through each CPU storage (the narrow ones screen the density searches on their
// copies) against the float32 full self-join.
TEST(DensityStore, OnDemandEqualsTheFullSelfJoinBitForBit) {
    const auto rows = tied_rows();
    for (const auto& [include_self, storage] : {std::pair{false, CpuStorage::f32}, {true, CpuStorage::f32},
                                                {false, CpuStorage::int8}, {true, CpuStorage::bf16}}) {
        SCOPED_TRACE(cpu_storage_name(storage));
        TempDir a, b;
        const Corpus on_demand(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
        const Corpus reference(Corpus::open(test::make_scoring_corpus(b, rows, dim)));
        ScoreOptions options;
        options.p = 15;
        options.q = 8;
        options.extra = 3;
        options.include_self = include_self;
        options.split_row = 200;
        const Ideas ideas = make_ideas(rows, 40, include_self ? 12 : 11, 40);
        ScoreOptions full = options;
        full.densities = DensityMethod::self_join;
        DensityCounts counts;
        const auto want = score_with(reference, full, ideas.input);
        const auto got = score_with(on_demand, options, ideas.input, &counts, storage);
        expect_identical(got, want, include_self ? "include_self" : "default",
                         storage == CpuStorage::f32 ? "" : std::string("cpu-") + cpu_storage_name(storage));
        EXPECT_EQ(counts.searches, 1u) << "one batched search for every missing density";
        EXPECT_GT(counts.computed, 0u);
        EXPECT_EQ(counts.searched_with_exclusions, 0u);
        EXPECT_EQ(files_named(a.file("c"), "selfjoin-"), 0u) << "no self-join was computed";
        EXPECT_GT(files_named(a.file("c"), "densities-k11-"), 0u);
        EXPECT_GT(files_named(a.file("c"), "densities-k"), files_named(a.file("c"), "densities-k11-"))
            << "longer lists for the neighbours of ideas that exclude more than extra rows";
    }
}

TEST(DensityStore, ASecondRunComputesNothingAndShorterCutoffsReuseLongerLists) {
    const auto rows = tied_rows();
    TempDir a, b;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    const Corpus reference(Corpus::open(test::make_scoring_corpus(b, rows, dim)));
    ScoreOptions options;
    options.p = 12;
    options.q = 6;
    const Ideas ideas = make_ideas(rows, 30, 21, 30);
    DensityCounts first, second;
    const auto scores = score_with(corpus, options, ideas.input, &first);
    const auto again = score_with(corpus, options, ideas.input, &second);  // a new scorer: a later run
    expect_identical(again, scores, "second run");
    EXPECT_GT(first.computed, 0u);
    EXPECT_EQ(second.computed, 0u);
    EXPECT_EQ(second.searches, 0u);
    EXPECT_EQ(second.served, ideas.input.n_ideas * options.p) << "every density read from the store";
    // The same ideas with the whole corpus, then with cutoffs: many densities at a cutoff are
    // served by the whole corpus's lists; all results still equal the reference path.
    Ideas whole = ideas;
    whole.input.vectors = whole.vectors.data();
    whole.input.row_limit.assign(whole.input.n_ideas, n_papers);
    whole.input.excluded = RowLists{};
    score_with(corpus, options, whole.input);
    Ideas cut = whole;
    cut.input.vectors = cut.vectors.data();
    for (std::size_t i = 0; i < cut.input.n_ideas; ++i) cut.input.row_limit[i] = n_papers - 20 - i;
    DensityCounts counts;
    ScoreOptions full = options;
    full.densities = DensityMethod::self_join;
    expect_identical(score_with(corpus, options, cut.input, &counts), score_with(reference, full, cut.input), "cutoffs");
    EXPECT_GT(counts.served, 0u) << "lists of the whole corpus serve cutoffs just below it";
}

TEST(DensityStore, AListServesAShorterPrefixOnlyWithEnoughRowsBelowIt) {
    // Row 7's list within [0, 100): rows 50, 3, 90, 20 (sims 0.9, 0.8, 0.8, 0.7), k = 4, full.
    const std::int32_t rows[4] = {50, 3, 90, 20};
    const float sims[4] = {0.9f, 0.8f, 0.8f, 0.7f};
    std::vector<float> out;
    EXPECT_TRUE(serve_from_list(rows, sims, 4, 100, 100, {}, 3, out));
    EXPECT_EQ(out, (std::vector<float>{0.9f, 0.8f, 0.8f}));
    EXPECT_TRUE(serve_from_list(rows, sims, 4, 100, 60, {}, 3, out));  // 90 is past the cutoff
    EXPECT_EQ(out, (std::vector<float>{0.9f, 0.8f, 0.7f}));
    EXPECT_FALSE(serve_from_list(rows, sims, 4, 100, 40, {}, 3, out));  // only 3 and 20 below 40
    EXPECT_FALSE(serve_from_list(rows, sims, 4, 100, 60, {3}, 3, out));  // an exclusion leaves 2
    EXPECT_TRUE(serve_from_list(rows, sims, 4, 100, 60, {3}, 2, out));
    EXPECT_EQ(out, (std::vector<float>{0.9f, 0.7f}));
    EXPECT_FALSE(serve_from_list(rows, sims, 4, 100, 101, {}, 1, out)) << "a longer prefix than the list's";
    // A list of a whole small prefix (padding): what it holds is all there is.
    const std::int32_t short_rows[4] = {1, 0, -1, -1};
    const float short_sims[4] = {0.5f, 0.4f, -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    EXPECT_TRUE(serve_from_list(short_rows, short_sims, 4, 3, 3, {}, 2, out));
    EXPECT_FALSE(serve_from_list(short_rows, short_sims, 4, 3, 3, {}, 3, out));
}

TEST(DensityStore, IndexCachesServeEveryRowAndADamagedSegmentIsRecomputed) {
    const auto rows = tied_rows();
    TempDir a;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    Ideas ideas = make_ideas(rows, 20, 41, 60);
    ideas.input.excluded = RowLists{};
    ideas.input.row_limit.assign(ideas.input.n_ideas, n_papers);  // the index's prefix
    {
        auto index = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
        cached_self_join(corpus, *index, n_papers, options.q, options.q + options.extra);  // novelty index
    }
    DensityCounts counts;
    const auto scores = score_with(corpus, options, ideas.input, &counts);
    EXPECT_EQ(counts.computed, 0u) << "the index's lists of the whole corpus serve these cutoffs";
    EXPECT_EQ(counts.searches, 0u);
    // Without the index's cache: computed into a segment; then that segment damaged.
    for (const auto& entry : fs::directory_iterator(a.file("c/cache"))) fs::remove(entry.path());
    score_with(corpus, options, ideas.input, &counts);
    EXPECT_GT(counts.computed, 0u);
    std::string segment;
    for (const auto& entry : fs::directory_iterator(a.file("c/cache")))
        if (entry.path().filename().string().rfind("densities-", 0) == 0) segment = entry.path().string();
    ASSERT_FALSE(segment.empty());
    std::string bytes = test::read_file(segment);
    bytes[bytes.size() / 2] ^= 0x10;
    test::write_file(segment, bytes);
    std::vector<std::string> warnings;
    ScoreOptions warned = options;
    warned.on_cache_warning = [&](const std::string& message) { warnings.push_back(message); };
    const auto recomputed = score_with(corpus, warned, ideas.input, &counts);
    expect_identical(recomputed, scores, "damaged segment");
    EXPECT_GT(counts.computed, 0u) << "the damaged segment's lists are computed again";
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(segment), std::string::npos);
    EXPECT_NE(warnings[0].find("damaged"), std::string::npos);
}

TEST(DensityStore, CompactionKeepsResultsAndBoundsListsPerPaper) {
    const auto rows = tied_rows();
    TempDir a, b;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    const Corpus reference(Corpus::open(test::make_scoring_corpus(b, rows, dim)));
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    ScoreOptions full = options;
    full.densities = DensityMethod::self_join;
    // Runs with other cutoffs each append a segment; past max_segments they are merged.
    for (std::uint32_t run = 0; run < DensityStore::max_segments + 3; ++run) {
        Ideas ideas = make_ideas(rows, 6, 100 + run, 30);
        expect_identical(score_with(corpus, options, ideas.input), score_with(reference, full, ideas.input),
                         "run " + std::to_string(run));
        // Eleven runs append at least eleven segments: compaction keeps them at most max_segments.
        EXPECT_LE(files_named(a.file("c"), "densities-k"), DensityStore::max_segments);
    }
    std::set<std::string> sizes;  // the k of each segment: compaction writes one segment per k
    for (const auto& entry : fs::directory_iterator(a.file("c/cache"))) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("densities-k", 0) == 0) sizes.insert(name.substr(0, name.rfind('-')));
    }
    DensityStore store(corpus, options.q + options.extra, true);
    store.compact();
    const DensityStoreStats stats = store.stats();
    EXPECT_EQ(stats.segments, sizes.size());
    EXPECT_EQ(files_named(a.file("c"), "densities-k"), sizes.size());
    EXPECT_LE(stats.lists, n_papers * DensityStore::max_lists_per_row);
    std::uint64_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(a.file("c/cache")))
        if (entry.path().filename().string().rfind("densities-k", 0) == 0 && entry.path().extension() == ".bin")
            bytes += fs::file_size(entry.path());
    EXPECT_EQ(stats.bytes, bytes);
    // After compaction the same ideas still score identically.
    Ideas ideas = make_ideas(rows, 6, 100, 30);
    DensityCounts counts;
    expect_identical(score_with(corpus, options, ideas.input, &counts), score_with(reference, full, ideas.input),
                     "after compaction");
}

TEST(DensityStore, AReadOnlyStoreKeepsItsListsInMemory) {
    const auto rows = tied_rows();
    TempDir a;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    ScoreOptions options;
    options.p = 10;
    options.q = 5;
    options.write_cache = false;  // the server
    const Ideas ideas = make_ideas(rows, 12, 51, 50);
    auto index = make_cpu_backend()->build(VectorView::of(corpus.vectors()));
    Scorer scorer(corpus, *index, options);
    const auto first = scorer.score(ideas.input);
    const std::size_t computed = scorer.density_counts().computed;
    EXPECT_GT(computed, 0u);
    expect_identical(scorer.score(ideas.input), first, "from memory");
    EXPECT_EQ(scorer.density_counts().computed, computed) << "the second call computes nothing";
    EXPECT_FALSE(fs::exists(a.file("c/cache")) && files_named(a.file("c"), "densities-") > 0);
}

TEST(DensityStore, AReaderSeesSegmentsAnotherWriterAppends) {
    const auto rows = tied_rows();
    TempDir a;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    DensityStore reader(corpus, 4, true), writer(corpus, 4, true);
    DensityLists lists;
    lists.k = 4;
    lists.rows = {7};
    lists.prefixes = {100};
    lists.neighbours = {50, 3, 90, 20};
    lists.sims = {0.9f, 0.8f, 0.8f, 0.7f};
    std::vector<float> sims;
    std::string label;
    EXPECT_FALSE(reader.serve(7, 60, {}, 3, sims, &label));
    writer.append(lists, "cpu");
    EXPECT_FALSE(reader.serve(7, 60, {}, 3, sims, &label)) << "not until it refreshes";
    reader.refresh();
    ASSERT_TRUE(reader.serve(7, 60, {}, 3, sims, &label));
    EXPECT_EQ(sims, (std::vector<float>{0.9f, 0.8f, 0.7f}));
    EXPECT_EQ(label, "cpu");
    EXPECT_FALSE(reader.serve(8, 60, {}, 1, sims, &label)) << "no list of row 8";
}

TEST(DensityStore, ExclusionsBeyondTheLongestListAreSearchedWithThem) {
    // An idea that excludes more rows than a list of max_k neighbours can spare: its neighbours
    // are searched with its exclusions (in the same batch), as the full path's direct search.
    const std::size_t n = 2300, d = 6;
    const auto rows = test::random_unit_rows(n, d, 61);
    TempDir a, b;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, d)));
    const Corpus reference(Corpus::open(test::make_scoring_corpus(b, rows, d)));
    ScoreOptions options;
    options.p = 4;
    options.q = 3;
    const auto idea = test::random_unit_rows(2, d, 62);
    ScoreInput input{idea.data(), 2, d, {n, n}, {}, {}};
    const VectorView view{rows.data(), DType::f32, n, d};
    const auto near = test::reference_topk(view, idea.data(), n, {}, 2100);
    std::vector<std::int64_t> excluded;
    for (std::size_t r = 10; r < near.size(); ++r) excluded.push_back(near[r].row);  // keeps its 10 nearest
    input.excluded.add(excluded);
    input.excluded.add({});
    ScoreOptions full = options;
    full.densities = DensityMethod::self_join;
    DensityCounts counts;
    expect_identical(score_with(corpus, options, input, &counts), score_with(reference, full, input), "many exclusions");
    EXPECT_EQ(counts.searched_with_exclusions, options.p);
    EXPECT_EQ(counts.searches, 1u);
}

namespace {

/// n ideas near corpus rows (a row's vector plus noise), all with `limit`, no exclusions.
Ideas plain_ideas(const std::vector<float>& corpus_rows, std::size_t n_ideas, std::uint32_t seed, std::size_t limit) {
    Ideas ideas;
    ideas.vectors = test::random_unit_rows(n_ideas, dim, seed);
    std::mt19937 rng(seed);
    for (std::size_t i = 0; i < n_ideas; ++i) {
        const std::size_t row = rng() % n_papers;
        for (std::size_t d = 0; d < dim; ++d) ideas.vectors[i * dim + d] = corpus_rows[row * dim + d] + 0.3f * ideas.vectors[i * dim + d];
    }
    ideas.input.n_ideas = n_ideas;
    ideas.input.dim = dim;
    ideas.input.row_limit.assign(n_ideas, limit);
    ideas.input.vectors = ideas.vectors.data();
    return ideas;
}

}  // namespace

// The default chooses by cost: a batch that reaches a few papers searches them; one that reaches
// most of the corpus self-joins it (stored as `novelty index` stores it); --densities on-demand
// still searches. Every way gives the reference's bits.
TEST(DensityStore, TheCostChoiceSearchesForAFewIdeasAndSelfJoinsForMany) {
    const auto rows = tied_rows();
    TempDir ref_dir;
    const Corpus reference(Corpus::open(test::make_scoring_corpus(ref_dir, rows, dim)));
    ScoreOptions options;
    options.p = 12;
    options.q = 6;
    ScoreOptions full = options;
    full.densities = DensityMethod::self_join;
    struct Case {
        std::size_t n_ideas;
        DensityMethod method;
        bool joins;
    };
    for (const Case& c : {Case{2, DensityMethod::by_cost, false}, Case{150, DensityMethod::by_cost, true},
                          Case{150, DensityMethod::on_demand, false}}) {
        SCOPED_TRACE(std::to_string(c.n_ideas) + " ideas, method " + std::to_string(static_cast<int>(c.method)));
        TempDir dir;
        const Corpus corpus(Corpus::open(test::make_scoring_corpus(dir, rows, dim)));
        const Ideas ideas = plain_ideas(rows, c.n_ideas, 40, n_papers);
        ScoreOptions chosen = options;
        chosen.densities = c.method;
        std::vector<std::string> plans;
        chosen.on_density_plan = [&](const std::string& plan) { plans.push_back(plan); };
        DensityCounts counts;
        const auto got = score_with(corpus, chosen, ideas.input, &counts);
        expect_identical(got, score_with(reference, full, ideas.input), "chosen");
        ASSERT_EQ(plans.size(), 1u);
        EXPECT_EQ(counts.joins, c.joins ? 1u : 0u) << plans[0];
        EXPECT_EQ(files_named(dir.file("c"), "selfjoin-q6-k14-rows360"), c.joins ? 1u : 0u);
        EXPECT_EQ(plans[0].rfind(c.joins ? "self-join of 360 rows" : "on demand", 0), 0u) << plans[0];
        EXPECT_EQ(counts.computed == 0, c.joins) << "a join leaves nothing to search";
        for (const IdeaScore& s : got) EXPECT_EQ(s.densities_path, c.joins ? "self-join" : "on-demand");
        // A later run reads what this one stored.
        const auto again = score_with(corpus, chosen, ideas.input, &counts);
        EXPECT_EQ(counts.joins + counts.computed, 0u);
        for (const IdeaScore& s : again) EXPECT_EQ(s.densities_path, "store");
    }
}

// A neighbour missing its list at two cutoffs is searched over [0, lower) and [lower, upper),
// once up to its largest cutoff, and both lists are exact.
TEST(DensityStore, ARowMissingAtSeveralCutoffsIsSearchedOnceUpToItsLargest) {
    const auto rows = tied_rows();
    TempDir a, b;
    const Corpus corpus(Corpus::open(test::make_scoring_corpus(a, rows, dim)));
    const Corpus reference(Corpus::open(test::make_scoring_corpus(b, rows, dim)));
    ScoreOptions options;
    options.p = 12;
    options.q = 6;
    options.densities = DensityMethod::on_demand;
    Ideas ideas = plain_ideas(rows, 6, 41, n_papers);
    for (std::size_t i = 0; i < 6; ++i) {  // pairs of ideas: one vector at two cutoffs
        std::copy_n(ideas.vectors.begin() + (i / 2) * 2 * dim, dim, ideas.vectors.begin() + i * dim);
        ideas.input.row_limit[i] = i % 2 ? n_papers : 250;
    }
    DensityCounts counts;
    ScoreOptions full = options;
    full.densities = DensityMethod::self_join;
    const auto got = score_with(corpus, options, ideas.input, &counts);
    expect_identical(got, score_with(reference, full, ideas.input), "two cutoffs");
    std::map<std::int64_t, std::size_t> largest;  // each neighbour row: its largest cutoff
    std::set<std::pair<std::int64_t, std::size_t>> keys;
    for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t r = 0; r < options.p; ++r) {
            const std::int64_t row = got[i].neighbor_rows[r];
            largest[row] = std::max(largest[row], ideas.input.row_limit[i]);
            keys.insert({row, ideas.input.row_limit[i]});
        }
    std::uint64_t once = 0, per_cutoff = 0;
    for (const auto& [row, limit] : largest) once += limit;
    for (const auto& [row, limit] : keys) per_cutoff += limit;
    ASSERT_LT(once, per_cutoff) << "some neighbours are shared between the two cutoffs";
    EXPECT_EQ(counts.row_pairs_searched, once);
    EXPECT_EQ(counts.rows_searched, keys.size()) << "one query per (row, cutoff): a segment each";
}
