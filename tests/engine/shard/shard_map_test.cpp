// The strided shard map and the merge, checked in one process: shards of a corpus searched one
// by one and merged must give exactly (bitwise) what one index over the whole corpus gives, with
// cutoffs, begins, exclusions, candidates, ties across shards and shards holding fewer than k
// rows. The MPI transport around them is tested end to end in tests/cli/mpi_cli_test.cpp.
#include "shard/shard_map.hpp"
#include "shard/shard_launch.hpp"

#include "novelty/search/search.hpp"
#include "search/search_rules.hpp"
#include "search_reference.hpp"

#include <gtest/gtest.h>

#include <memory>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <random>

namespace {

using novelty::ShardMap;

TEST(ShardMap, LocalBelowCountsTheRowsOfEachRank) {
    for (std::size_t n_rows : {0u, 1u, 2u, 5u, 17u})
        for (std::size_t n_ranks : {1u, 2u, 3u, 4u, 7u})
            for (std::size_t rank = 0; rank < n_ranks; ++rank) {
                const ShardMap map{n_rows, n_ranks, rank};
                for (std::size_t global = 0; global <= n_rows + 3; ++global) {
                    std::size_t expected = 0;
                    for (std::size_t g = 0; g < std::min(global, n_rows); ++g) expected += g % n_ranks == rank;
                    EXPECT_EQ(map.local_below(global), expected) << n_rows << " " << n_ranks << " " << rank;
                }
                for (std::size_t j = 0; j < map.local_rows(); ++j) {
                    EXPECT_TRUE(map.holds(map.global_of(j)));
                    EXPECT_EQ(map.local_of(map.global_of(j)), j);
                }
                EXPECT_FALSE(map.holds(-1));
                EXPECT_FALSE(map.holds(static_cast<std::int64_t>(n_rows)));
            }
}

// A corpus of random unit rows with exact duplicates (ties) spread over the shards.
std::vector<float> corpus_with_ties(std::size_t n, std::size_t dim) {
    std::vector<float> rows = novelty::test::random_unit_rows(n, dim, 11);
    for (std::size_t i = 0; i + 7 < n; i += 9)  // row i + 7 (another shard for 2 and 3 ranks) copies row i
        std::memcpy(rows.data() + (i + 7) * dim, rows.data() + i * dim, dim * sizeof(float));
    return rows;
}

// Queries normalised once (as the sharded index does before broadcasting), used as given.
novelty::SearchQueries make_queries(const std::vector<float>& vectors, std::size_t dim, std::size_t n_rows) {
    novelty::SearchQueries queries;
    queries.vectors = vectors.data();
    queries.n_queries = vectors.size() / dim;
    queries.dim = dim;
    queries.unit_norm = true;
    std::mt19937 rng(5);
    for (std::size_t i = 0; i < queries.n_queries; ++i) {
        queries.scope.row_begin.push_back(i % 4 == 1 ? rng() % (n_rows / 2) : 0);
        queries.scope.row_limit.push_back(i % 3 == 0 ? n_rows + 5 : rng() % (n_rows + 1));
        std::vector<std::int64_t> excluded;
        for (int e = 0; e < 4; ++e) excluded.push_back(static_cast<std::int64_t>(rng() % n_rows));
        queries.scope.excluded.add(excluded);
    }
    return queries;
}

// Searches each strided shard on its own and merges, as the ranks and rank 0 do.
template <typename LocalSearch>
novelty::TopK sharded(const std::vector<float>& corpus, std::size_t dim, std::size_t n_ranks, std::size_t n_queries,
                      std::size_t k, const LocalSearch& local_search) {
    const std::size_t n_rows = corpus.size() / dim;
    std::vector<std::int64_t> rows;
    std::vector<float> sims;
    for (std::size_t rank = 0; rank < n_ranks; ++rank) {
        const ShardMap map{n_rows, n_ranks, rank};
        std::vector<float> local(map.local_rows() * dim);
        for (std::size_t j = 0; j < map.local_rows(); ++j)
            std::memcpy(local.data() + j * dim, corpus.data() + map.global_of(j) * dim, dim * sizeof(float));
        novelty::TopK top = novelty::empty_top_k(n_queries, k);
        if (!local.empty()) {
            auto index = novelty::make_cpu_backend()->build(novelty::VectorView::of(local, dim));
            index->tuning.query_tile = 5;
            index->tuning.corpus_tile = 7;
            top = local_search(*index, map);
        }
        novelty::to_global_rows(top.rows, map);
        rows.insert(rows.end(), top.rows.begin(), top.rows.end());
        sims.insert(sims.end(), top.sims.begin(), top.sims.end());
    }
    novelty::TopK merged = novelty::merge_top_k(rows, sims, n_ranks, n_queries, k, 2);
    // The ranks merge pairwise along MPI_Reduce's tree (merge_two_lists); any order gives the same.
    std::vector<novelty::ListEntry> folded(n_queries * k);
    for (std::size_t rank = n_ranks; rank-- > 0;) {
        novelty::TopK part = novelty::empty_top_k(n_queries, k);
        std::copy_n(rows.begin() + rank * n_queries * k, n_queries * k, part.rows.begin());
        std::copy_n(sims.begin() + rank * n_queries * k, n_queries * k, part.sims.begin());
        const auto entries = novelty::to_list_entries(part);
        if (rank == n_ranks - 1) folded = entries;
        else
            for (std::size_t i = 0; i < n_queries; ++i) novelty::merge_two_lists(folded.data() + i * k, entries.data() + i * k, k);
    }
    const novelty::TopK pairwise = novelty::from_list_entries(folded, n_queries, k);
    EXPECT_EQ(pairwise.rows, merged.rows);
    EXPECT_EQ(pairwise.count, merged.count);
    EXPECT_EQ(0, std::memcmp(pairwise.sims.data(), merged.sims.data(), merged.sims.size() * sizeof(float)));
    return merged;
}

void expect_identical(const novelty::TopK& one, const novelty::TopK& merged) {
    ASSERT_EQ(one.rows.size(), merged.rows.size());
    EXPECT_EQ(one.rows, merged.rows);
    EXPECT_EQ(one.count, merged.count);
    EXPECT_EQ(0, std::memcmp(one.sims.data(), merged.sims.data(), one.sims.size() * sizeof(float)));
}

TEST(ShardMap, MergeTwoListsKeepsTheBestKTiesByLowerRow) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<novelty::ListEntry> a = {{0.9f, 4}, {0.5f, 8}, {0.5f, 10}, {-inf, -1}};
    const std::vector<novelty::ListEntry> b = {{0.7f, 3}, {0.5f, 9}, {-inf, -1}, {-inf, -1}};
    novelty::merge_two_lists(a.data(), b.data(), 4);
    const std::vector<std::int32_t> rows = {a[0].row, a[1].row, a[2].row, a[3].row};
    EXPECT_EQ(rows, (std::vector<std::int32_t>{4, 3, 8, 9}));
    std::vector<novelty::ListEntry> empty = {{-inf, -1}, {-inf, -1}};
    const std::vector<novelty::ListEntry> one = {{0.1f, 2}, {-inf, -1}};
    novelty::merge_two_lists(empty.data(), one.data(), 2);
    EXPECT_EQ(empty[0].row, 2);
    EXPECT_EQ(empty[1].row, -1);
    const novelty::TopK top = novelty::from_list_entries(empty, 1, 2);
    EXPECT_EQ(top.count[0], 1u);
}

TEST(ShardedSearch, MergedShardsEqualOneIndexBitwise) {
    const std::size_t dim = 19, n_rows = 103;
    const auto corpus = corpus_with_ties(n_rows, dim);
    std::vector<float> query_vectors(corpus.begin(), corpus.begin() + 30 * dim);  // duplicates tie
    const auto more = novelty::test::random_unit_rows(20, dim, 3);
    query_vectors.insert(query_vectors.end(), more.begin(), more.end());
    const auto queries = make_queries(query_vectors, dim, n_rows);
    auto one = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
    for (std::size_t k : {1u, 8u, 40u, 120u})
        for (std::size_t n_ranks : {1u, 2u, 3u, 5u}) {
            SCOPED_TRACE("k " + std::to_string(k) + ", ranks " + std::to_string(n_ranks));
            const novelty::TopK merged =
                sharded(corpus, dim, n_ranks, queries.n_queries, k, [&](novelty::SearchIndex& index, const ShardMap& map) {
                    return index.search(novelty::local_queries(queries, map), k);
                });
            expect_identical(one->search(queries, k), merged);
        }
}

TEST(ShardedSearch, RowFiltersMapToEachShardAndMergeToOneIndexsAnswer) {
    const std::size_t dim = 11, n_rows = 157;
    const auto corpus = corpus_with_ties(n_rows, dim);
    const auto query_vectors = novelty::test::random_unit_rows(24, dim, 17);
    auto queries = make_queries(query_vectors, dim, n_rows);
    std::vector<std::shared_ptr<const novelty::RowFilter>> kinds;
    for (std::size_t modulus : {2u, 3u, 7u, 64u}) {
        auto filter = std::make_shared<novelty::RowFilter>(novelty::RowFilter::none(n_rows));
        for (std::size_t row = modulus / 2; row < n_rows; row += modulus) filter->allow(row);
        kinds.push_back(filter);
    }
    kinds.push_back(nullptr);
    for (std::size_t i = 0; i < queries.n_queries; ++i) queries.scope.filters.push_back(kinds[i % kinds.size()]);
    auto one = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
    for (std::size_t n_ranks : {2u, 3u, 5u}) {
        SCOPED_TRACE("ranks " + std::to_string(n_ranks));
        const novelty::TopK merged =
            sharded(corpus, dim, n_ranks, queries.n_queries, 12, [&](novelty::SearchIndex& index, const ShardMap& map) {
                return index.search(novelty::local_queries(queries, map), 12);
            });
        expect_identical(one->search(queries, 12), merged);
    }
}

TEST(ShardedSearch, CandidatesMergeToOneIndexsAnswer) {
    const std::size_t dim = 8, n_rows = 40;
    const auto corpus = corpus_with_ties(n_rows, dim);
    const auto query_vectors = novelty::test::random_unit_rows(6, dim, 9);
    const auto queries = make_queries(query_vectors, dim, n_rows);
    novelty::RowLists candidates;
    for (std::size_t i = 0; i < 6; ++i) candidates.add({0, 7, 7, 9, 16, 25, static_cast<std::int64_t>(30 + i), 39});
    auto one = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
    for (std::size_t n_ranks : {2u, 3u}) {
        const novelty::TopK merged = sharded(corpus, dim, n_ranks, 6, 4, [&](novelty::SearchIndex& index, const ShardMap& map) {
            return index.search_candidates(novelty::local_queries(queries, map),
                                           novelty::local_candidates(candidates, map), 4);
        });
        expect_identical(one->search_candidates(queries, candidates, 4), merged);
    }
}

// The distributed self-join: every row searched as a query, as stored, against each shard with
// itself left out, equals the one-process self-join (its symmetric and its blockwise paths).
TEST(ShardedSearch, SelfJoinFromShardsEqualsOneProcessJoin) {
    const std::size_t dim = 24, n_rows = 90, q = 5, k_stored = 9;
    const auto corpus = corpus_with_ties(n_rows, dim);
    for (std::size_t memory : {0u, 1u}) {  // 0: symmetric join; 1 byte: block by block
        auto one = novelty::make_cpu_backend()->build(novelty::VectorView::of(corpus, dim));
        one->tuning.self_join_memory = memory;
        one->tuning.query_tile = 16;
        const novelty::SelfJoin expected = one->self_join(70, q, k_stored);
        novelty::SearchQueries rows_as_queries;
        rows_as_queries.vectors = corpus.data();
        rows_as_queries.n_queries = 70;
        rows_as_queries.dim = dim;
        rows_as_queries.unit_norm = true;
        rows_as_queries.scope.row_limit.assign(70, 70);
        for (std::int64_t i = 0; i < 70; ++i) rows_as_queries.scope.excluded.add({i});
        novelty::TopK merged = sharded(corpus, dim, 3, 70, k_stored, [&](novelty::SearchIndex& index, const ShardMap& map) {
            return index.search(novelty::local_queries(rows_as_queries, map), k_stored);
        });
        const novelty::SelfJoin join = novelty::self_join_from(std::move(merged), 70, q);
        EXPECT_EQ(join.rows, expected.rows);
        EXPECT_EQ(0, std::memcmp(join.sims.data(), expected.sims.data(), join.sims.size() * sizeof(float)));
        EXPECT_EQ(0, std::memcmp(join.density.data(), expected.density.data(), join.density.size() * sizeof(float)));
    }
}

}  // namespace

namespace {

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_.empty()) unsetenv(name_);
        else setenv(name_, old_.c_str(), 1);
    }

private:
    const char* name_;
    std::string old_;
};

}  // namespace

TEST(ShardLaunch, ReadsTheLaunchersEnvironment) {
    {
        ScopedEnv size("OMPI_COMM_WORLD_SIZE", "3"), local("OMPI_COMM_WORLD_LOCAL_RANK", "2");
        EXPECT_TRUE(novelty::launched_by_mpi());
        EXPECT_EQ(novelty::launched_ranks(), 3);
        EXPECT_EQ(novelty::local_rank_from_environment(), 2);
    }
    ScopedEnv size("OMPI_COMM_WORLD_SIZE", nullptr), pmi("PMI_SIZE", nullptr), pmix("PMIX_RANK", nullptr);
    ScopedEnv local("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), mpich("MPI_LOCALRANKID", nullptr), slurm("SLURM_LOCALID", "5");
    EXPECT_FALSE(novelty::launched_by_mpi());
    EXPECT_EQ(novelty::launched_ranks(), 1);
    EXPECT_EQ(novelty::local_rank_from_environment(), 5);
}
