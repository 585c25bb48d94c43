// Self-join cache files: round trip, keyed by parameters, invalidated by other vectors.
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/scoring/neighbor_cache.hpp"
#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

using namespace novelty;
using novelty::test::TempDir;

namespace {

void make_corpus(const TempDir& tmp, std::size_t n, std::size_t dim, std::uint32_t seed) {
    std::string records;
    for (std::size_t i = 0; i < n; ++i)
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"t\", \"year\": " + std::to_string(2000 + i % 20) + "}\n";
    test::write_file(tmp.file("in.jsonl"), records);
    ImportOptions options;
    options.sources.push_back({tmp.file("in.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    import_corpus(options);
    const auto values = test::random_unit_rows(n, dim, seed);
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, values.data());
    AddVectorsOptions add;
    add.vectors_path = tmp.file("v.npy");
    add_vectors(tmp.file("c"), add);
}

}  // namespace

TEST(NeighborCache, ComputesOnceThenLoadsTheSameJoin) {
    TempDir tmp;
    make_corpus(tmp, 300, 16, 1);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    auto backend = make_cpu_backend();
    bool from_cache = true;
    const SelfJoin first = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 300, 5, 9, {}, &from_cache);
    EXPECT_FALSE(from_cache);
    EXPECT_TRUE(std::filesystem::exists(self_join_cache_path(corpus, 300, 5, 9)));
    const SelfJoin second = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 300, 5, 9, {}, &from_cache);
    EXPECT_TRUE(from_cache);
    EXPECT_EQ(first.rows, second.rows);
    EXPECT_EQ(first.sims, second.sims);
    EXPECT_EQ(first.density, second.density);
    // Another prefix or q is another cache entry.
    cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 120, 5, 9, {}, &from_cache);
    EXPECT_FALSE(from_cache);
    cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 300, 6, 9, {}, &from_cache);
    EXPECT_FALSE(from_cache);
}

TEST(NeighborCache, RecordsWhichBackendComputedTheJoin) {
    TempDir tmp;
    make_corpus(tmp, 150, 8, 4);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    const std::string sha = corpus.manifest().vectors_sha256;
    auto backend = make_cpu_backend();
    EXPECT_EQ(cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 150, 4, 6).computed_by, "cpu");
    const std::string path = self_join_cache_path(corpus, 150, 4, 6);
    SelfJoin join;
    ASSERT_TRUE(read_self_join(path, sha, 150, 4, 6, join));
    EXPECT_EQ(join.computed_by, "cpu");

    // A label is kept to 16 bytes.
    join.computed_by = "a-very-long-backend-label";
    write_self_join(path, sha, join);
    SelfJoin back;
    ASSERT_TRUE(read_self_join(path, sha, 150, 4, 6, back));
    EXPECT_EQ(back.computed_by, "a-very-long-back");
    EXPECT_EQ(back.density, join.density);

    // Files of the earlier formats carry no checksum: they are not used, but computed again
    // and replaced.
    const std::string v3 = test::read_file(path);
    ASSERT_EQ(v3.substr(0, 8), "NVSJOIN3");
    const std::size_t header = 8 + 64 + 3 * 8;
    const std::string v2 = "NVSJOIN2" + v3.substr(8, v3.size() - 8 - 64);
    for (const std::string& old_file : {v2, "NVSJOIN1" + v2.substr(8, header - 8) + v2.substr(header + 16)}) {
        test::write_file(path, old_file);
        SelfJoin old;
        EXPECT_FALSE(read_self_join(path, sha, 150, 4, 6, old));
        bool from_cache = true;
        EXPECT_EQ(cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 150, 4, 6, {}, &from_cache).computed_by, "cpu");
        EXPECT_FALSE(from_cache) << "an unchecked cache is not used";
        EXPECT_EQ(test::read_file(path).substr(0, 8), "NVSJOIN3");
    }
}

TEST(NeighborCache, IgnoresCachesOfOtherVectorsAndDamagedFiles) {
    TempDir tmp;
    make_corpus(tmp, 200, 8, 2);
    auto backend = make_cpu_backend();
    const std::string path = [&] {
        const Corpus corpus = Corpus::open(tmp.file("c"));
        cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 200, 4, 6);
        return self_join_cache_path(corpus, 200, 4, 6);
    }();
    SelfJoin join;
    EXPECT_FALSE(read_self_join(path, std::string(64, '0'), 200, 4, 6, join));  // other vectors
    const std::string sha = Corpus::open(tmp.file("c")).manifest().vectors_sha256;
    EXPECT_TRUE(read_self_join(path, sha, 200, 4, 6, join));
    EXPECT_FALSE(read_self_join(path, sha, 199, 4, 6, join));
    // The cache for these vectors and parameters, damaged: an error naming the file.
    const std::string bytes = test::read_file(path);
    test::write_file(path, bytes.substr(0, bytes.size() - 3));  // truncated
    EXPECT_THROW(read_self_join(path, sha, 200, 4, 6, join), CorpusError);
    test::write_file(path, bytes + "x");  // trailing garbage
    EXPECT_THROW(read_self_join(path, sha, 200, 4, 6, join), CorpusError);
    std::string flipped = bytes;
    flipped[bytes.size() - 64 - 5] ^= 0x10;  // a bit of the last density
    test::write_file(path, flipped);
    try {
        read_self_join(path, sha, 200, 4, 6, join);
        ADD_FAILURE() << "a flipped bit was not noticed";
    } catch (const CorpusError& e) {
        EXPECT_NE(std::string(e.what()).find(path + ": the cached neighbour densities are damaged"), std::string::npos)
            << e.what();
    }
    {
        const Corpus corpus = Corpus::open(tmp.file("c"));
        EXPECT_THROW(cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 200, 4, 6), CorpusError) << "never used, never silently replaced";
    }
    test::write_file(path, bytes);

    // New vectors remove the cache directory; a stale file put back by hand is not used either.
    const auto values = test::random_unit_rows(200, 8, 3);
    write_npy(tmp.file("v2.npy"), DType::f32, 200, 8, values.data());
    AddVectorsOptions add;
    add.vectors_path = tmp.file("v2.npy");
    add_vectors(tmp.file("c"), add);
    EXPECT_FALSE(std::filesystem::exists(path));
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    test::write_file(path, bytes);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    bool from_cache = true;
    const SelfJoin fresh = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 200, 4, 6, {}, &from_cache);
    EXPECT_FALSE(from_cache);
    const SelfJoin direct = backend->build(VectorView::of(corpus.vectors()))->self_join(200, 4, 6);
    EXPECT_EQ(fresh.density, direct.density);
}

// novelty index's repair: a damaged cache is removed with its problem named and computed again;
// a missing, valid or foreign one is left to cached_self_join.
TEST(NeighborCache, RemoveDamagedTakesOutOnlyADamagedCache) {
    TempDir tmp;
    make_corpus(tmp, 150, 8, 5);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    auto backend = make_cpu_backend();
    const std::string path = self_join_cache_path(corpus, 150, 4, 6);
    EXPECT_EQ(remove_damaged_self_join(corpus, 150, 4, 6), std::nullopt) << "no cache yet";
    const SelfJoin first = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 150, 4, 6);
    EXPECT_EQ(remove_damaged_self_join(corpus, 150, 4, 6), std::nullopt) << "a valid cache";
    EXPECT_EQ(remove_damaged_self_join(corpus, 149, 4, 6), std::nullopt) << "another prefix's (none)";
    ASSERT_TRUE(std::filesystem::exists(path));

    const std::string bytes = test::read_file(path);
    test::write_file(path, bytes.substr(0, bytes.size() - 3));  // truncated
    const std::optional<std::string> problem = remove_damaged_self_join(corpus, 150, 4, 6);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find(path), std::string::npos) << *problem;
    EXPECT_FALSE(std::filesystem::exists(path));
    bool from_cache = true;
    const SelfJoin again = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 150, 4, 6, {}, &from_cache);
    EXPECT_FALSE(from_cache);
    EXPECT_EQ(again.density, first.density);
    EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(NeighborCache, AnUnwritableCacheFailsIndexingButNotScoring) {
    TempDir tmp;
    make_corpus(tmp, 120, 8, 4);
    // A file where the cache directory would go: nothing can be stored (root ignores chmod).
    test::write_file(tmp.file("c/cache"), "not a directory");
    const Corpus corpus = Corpus::open(tmp.file("c"));
    auto backend = make_cpu_backend();
    EXPECT_THROW(cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 120, 4, 6), std::exception);
    std::vector<std::string> warnings;
    const SelfJoin join = cached_self_join(corpus, *backend->build(VectorView::of(corpus.vectors())), 120, 4, 6, {}, nullptr,
                                           [&](const std::string& m) { warnings.push_back(m); });
    EXPECT_EQ(join.n_rows, 120u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("could not be cached"), std::string::npos) << warnings[0];
}
