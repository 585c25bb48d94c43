// dedup_ideas and match_archive against a brute-force reference: every pair's similarity in
// double, union-find over the pairs at or above the threshold, means over every pair.
#include "novelty/scoring/dedup.hpp"
#include "novelty/util/error.hpp"
#include "search_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace novelty {
namespace {

struct Reference {
    std::vector<std::size_t> cluster;
    std::vector<std::vector<double>> sims;  // n x n, in double
};

std::vector<double> unit_double(const float* v, std::size_t dim) {
    double norm = 0;
    for (std::size_t c = 0; c < dim; ++c) norm += double(v[c]) * v[c];
    std::vector<double> out(dim);
    for (std::size_t c = 0; c < dim; ++c) out[c] = v[c] / std::sqrt(norm);
    return out;
}

Reference brute_force(const std::vector<float>& x, std::size_t dim, const std::vector<char>& active, double t) {
    const std::size_t n = x.size() / dim;
    Reference ref;
    ref.sims.assign(n, std::vector<double>(n, 0));
    std::vector<std::vector<double>> unit(n);
    for (std::size_t i = 0; i < n; ++i)
        if (active.empty() || active[i]) unit[i] = unit_double(x.data() + i * dim, dim);
    std::vector<std::size_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](std::size_t a) {
        while (parent[a] != a) a = parent[a];
        return a;
    };
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            if (unit[i].empty() || unit[j].empty()) continue;
            double s = 0;
            for (std::size_t c = 0; c < dim; ++c) s += unit[i][c] * unit[j][c];
            ref.sims[i][j] = s;
            if (i < j && s >= t) parent[find(i)] = find(j);
        }
    std::map<std::size_t, std::size_t> numbering;
    for (std::size_t i = 0; i < n; ++i) {
        const auto it = numbering.emplace(find(i), numbering.size()).first;
        ref.cluster.push_back(it->second);
    }
    return ref;
}

// A threshold near `wanted` that no pair is within 1e-4 of, so float and double agree on links.
double clear_threshold(const Reference& ref, double wanted) {
    for (double t = wanted;; t += 3e-4) {
        bool clear = true;
        for (const auto& row : ref.sims)
            for (double s : row)
                if (std::abs(s - t) < 1e-4) clear = false;
        if (clear) return t;
    }
}

void check_against_reference(SearchBackend& backend, const std::vector<float>& x, std::size_t dim,
                             const std::vector<char>& active, double wanted_t, std::size_t first_k) {
    const std::size_t n = x.size() / dim;
    const double t = clear_threshold(brute_force(x, dim, active, wanted_t), wanted_t);
    const Reference ref = brute_force(x, dim, active, t);
    for (Representative mode : {Representative::central, Representative::first}) {
        DedupOptions options;
        options.threshold = static_cast<float>(t);
        options.first_k = first_k;
        options.representative = mode;
        const DedupResult got = dedup_ideas(backend, x.data(), n, dim, active, options);
        ASSERT_EQ(got.cluster, ref.cluster) << "first_k " << first_k;
        for (std::size_t c = 0; c < got.representative.size(); ++c) {
            std::vector<std::size_t> members;
            for (std::size_t i = 0; i < n; ++i)
                if (ref.cluster[i] == c) members.push_back(i);
            ASSERT_EQ(got.cluster_size[c], members.size());
            std::vector<double> mean(members.size(), 0);
            for (std::size_t a = 0; a < members.size(); ++a) {
                for (std::size_t b = 0; b < members.size(); ++b)
                    if (a != b) mean[a] += ref.sims[members[a]][members[b]];
                if (members.size() > 1) {
                    mean[a] /= double(members.size() - 1);
                    EXPECT_NEAR(got.mean_sim[members[a]], mean[a], 1e-5);
                } else {
                    EXPECT_TRUE(std::isnan(got.mean_sim[members[a]]));
                }
            }
            const std::size_t rep = got.representative[c];
            if (mode == Representative::first) {
                EXPECT_EQ(rep, members[0]);
            } else {
                const double best = *std::max_element(mean.begin(), mean.end());
                const std::size_t at = std::find(members.begin(), members.end(), rep) - members.begin();
                ASSERT_LT(at, members.size());
                EXPECT_NEAR(mean[at], best, 1e-6);
                // By the reported means: the representative is the earliest member within 1e-6 of
                // the highest.
                double top = -2;
                for (std::size_t i : members) top = std::max(top, got.mean_sim[i]);
                for (std::size_t a = 0; members.size() > 1 && a < members.size(); ++a) {
                    if (a < at) EXPECT_LT(got.mean_sim[members[a]], top - 1e-6);
                }
                if (members.size() > 1) EXPECT_GE(got.mean_sim[rep], top - 1e-6);
            }
            for (std::size_t i : members)
                EXPECT_NEAR(got.sim_to_representative[i], i == rep ? 1.0 : ref.sims[i][rep], 1e-5);
        }
    }
}

// Clusters of near-duplicates around random centres, plus unrelated ideas.
std::vector<float> clustered(std::size_t n_centres, std::size_t per, std::size_t n_noise, std::size_t dim, float noise,
                             std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    const std::vector<float> centres = test::random_unit_rows(n_centres, dim, seed + 1);
    std::vector<float> x;
    for (std::size_t c = 0; c < n_centres; ++c)
        for (std::size_t j = 0; j < per; ++j)
            for (std::size_t d = 0; d < dim; ++d) x.push_back(centres[c * dim + d] + noise * normal(rng) / std::sqrt(float(dim)));
    const std::vector<float> others = test::random_unit_rows(n_noise, dim, seed + 2);
    x.insert(x.end(), others.begin(), others.end());
    // Shuffle rows so that clusters interleave in input order.
    const std::size_t n = x.size() / dim;
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < n; ++i) std::copy(x.begin() + perm[i] * dim, x.begin() + (perm[i] + 1) * dim, out.begin() + i * dim);
    return out;
}

// A random walk: each step about `step_sim` from the last, the ends far apart.
std::vector<float> chain(std::size_t length, std::size_t dim, float step, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<float> x = test::random_unit_rows(1, dim, seed);
    for (std::size_t j = 1; j < length; ++j) {
        std::vector<float> next(x.end() - dim, x.end());
        double norm = 0;
        for (auto& v : next) {
            v += step * normal(rng) / std::sqrt(float(dim));
            norm += double(v) * v;
        }
        for (auto& v : next) v = static_cast<float>(v / std::sqrt(norm));
        x.insert(x.end(), next.begin(), next.end());
    }
    return x;
}

class DedupTest : public ::testing::TestWithParam<std::size_t> {
protected:
    void SetUp() override {
        backend = make_cpu_backend();
        backend->tuning.query_tile = 16;  // cross tile boundaries
        backend->tuning.corpus_tile = 24;
    }
    std::unique_ptr<SearchBackend> backend;
};

TEST_P(DedupTest, RandomClustersMatchBruteForce) {
    const std::size_t dim = 19;
    const std::vector<float> x = clustered(12, 6, 60, dim, 0.5f, 7);
    check_against_reference(*backend, x, dim, {}, 0.8, GetParam());
}

TEST_P(DedupTest, ChainsOfNearDuplicatesAreOneCluster) {
    const std::size_t dim = 48;
    std::vector<float> x = chain(40, dim, 0.45f, 3);
    const std::vector<float> second = chain(25, dim, 0.45f, 4);
    x.insert(x.end(), second.begin(), second.end());
    const Reference ref = brute_force(x, dim, {}, 0.8);
    // The walk's ends are far apart, yet linked through the chain.
    ASSERT_LT(ref.sims[0][39], 0.5);
    check_against_reference(*backend, x, dim, {}, 0.8, GetParam());
}

TEST_P(DedupTest, ExactDuplicatesBeyondKAndBridgedBlobs) {
    // Two blobs of 40 exact copies each, joined by one pair above the threshold: a top-k of any
    // k < 40 sees only copies, so the bridge is found only by the later rounds.
    const std::size_t dim = 16;
    std::vector<float> a = test::random_unit_rows(1, dim, 11), b(dim);
    std::vector<float> r = test::random_unit_rows(1, dim, 12);
    double along = 0;
    for (std::size_t d = 0; d < dim; ++d) along += a[d] * r[d];
    double norm = 0;
    for (std::size_t d = 0; d < dim; ++d) {
        r[d] -= static_cast<float>(along * a[d]);
        norm += double(r[d]) * r[d];
    }
    for (std::size_t d = 0; d < dim; ++d) b[d] = static_cast<float>(0.85 * a[d] + std::sqrt(1 - 0.85 * 0.85) * r[d] / std::sqrt(norm));
    std::vector<float> x;
    for (std::size_t i = 0; i < 80; ++i) {
        const auto& v = i % 2 ? a : b;
        x.insert(x.end(), v.begin(), v.end());
    }
    const std::vector<float> others = clustered(3, 5, 20, dim, 0.3f, 13);
    x.insert(x.end(), others.begin(), others.end());
    check_against_reference(*backend, x, dim, {}, 0.8, GetParam());
    DedupOptions options;
    options.first_k = GetParam();
    const DedupResult got = dedup_ideas(*backend, x.data(), x.size() / dim, dim, {}, options);
    EXPECT_EQ(got.cluster[0], got.cluster[1]);
    if (GetParam() < 79) EXPECT_GT(got.extra_rounds, 0u);
}

TEST_P(DedupTest, InactiveIdeasAreSingletonsAndNotRead) {
    const std::size_t dim = 12;
    std::vector<float> x = clustered(4, 5, 10, dim, 0.3f, 21);
    const std::size_t n = x.size() / dim;
    std::vector<char> active(n, 1);
    for (std::size_t i = 0; i < n; i += 4) {
        active[i] = 0;
        // Empty texts have no vector: zeros (or anything) must not matter.
        std::fill(x.begin() + i * dim, x.begin() + (i + 1) * dim, i % 8 ? 0.0f : NAN);
    }
    check_against_reference(*backend, x, dim, active, 0.8, GetParam());
}

INSTANTIATE_TEST_SUITE_P(FirstK, DedupTest, ::testing::Values(1, 3, 32));

TEST(Dedup, EdgeCases) {
    auto backend = make_cpu_backend();
    DedupOptions options;
    const DedupResult none = dedup_ideas(*backend, nullptr, 0, 8, {}, options);
    EXPECT_TRUE(none.cluster.empty());
    const std::vector<float> one = test::random_unit_rows(1, 8, 1);
    const DedupResult single = dedup_ideas(*backend, one.data(), 1, 8, {}, options);
    ASSERT_EQ(single.representative.size(), 1u);
    EXPECT_EQ(single.sim_to_representative[0], 1.0f);
    // Every idea inactive: all singletons, no vectors needed.
    const DedupResult all_empty = dedup_ideas(*backend, nullptr, 3, 0, {0, 0, 0}, options);
    EXPECT_EQ(all_empty.cluster, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Dedup, BadInputIsRefusedWithTheIdea) {
    auto backend = make_cpu_backend();
    std::vector<float> x = test::random_unit_rows(4, 8, 2);
    std::fill(x.begin() + 16, x.begin() + 24, 0.0f);
    DedupOptions options;
    try {
        dedup_ideas(*backend, x.data(), 4, 8, {}, options);
        FAIL() << "a zero vector was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("idea 2 is a zero vector"), std::string::npos) << e.what();
    }
    options.threshold = NAN;
    x = test::random_unit_rows(4, 8, 2);
    EXPECT_THROW(dedup_ideas(*backend, x.data(), 4, 8, {}, options), UsageError);
    options.threshold = 1.5f;
    EXPECT_THROW(dedup_ideas(*backend, x.data(), 4, 8, {}, options), UsageError);
    EXPECT_THROW(dedup_ideas(*backend, x.data(), 4, 8, {1, 1}, DedupOptions{}), UsageError);
}

TEST(Dedup, ArchiveMatchesAreTheBestRowAtOrAboveTheThreshold) {
    auto backend = make_cpu_backend();
    const std::size_t dim = 24;
    const std::vector<float> archive = clustered(5, 3, 30, dim, 0.2f, 31);
    const std::vector<float> ideas = clustered(5, 2, 10, dim, 0.2f, 31);  // same centres
    const std::size_t n = ideas.size() / dim, n_archive = archive.size() / dim;
    std::vector<char> active(n, 1);
    active[3] = 0;
    // The archive rows must be normalised.
    std::vector<float> unit;
    for (std::size_t r = 0; r < n_archive; ++r) {
        const auto u = unit_double(archive.data() + r * dim, dim);
        for (double v : u) unit.push_back(static_cast<float>(v));
    }
    const auto got = match_archive(*backend, VectorView::of(unit, dim), ideas.data(), n, dim, active, 0.8f);
    std::size_t matched = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto hits = test::reference_topk(VectorView::of(unit, dim), ideas.data() + i * dim, n_archive, {}, 1);
        const bool expect = active[i] && hits[0].sim >= 0.8;
        ASSERT_EQ(got[i].row >= 0, expect) << "idea " << i;
        if (!expect) continue;
        ++matched;
        EXPECT_NEAR(got[i].sim, hits[0].sim, 1e-5);
        EXPECT_NEAR(test::reference_topk(VectorView::of(unit, dim), ideas.data() + i * dim, n_archive, {}, n_archive)[0].sim,
                    got[i].sim, 1e-5);
    }
    EXPECT_GT(matched, 5u);
}

}  // namespace
}  // namespace novelty

namespace novelty {
namespace {

// Exact copies of a vector are similar 1 up to float rounding, which may land above 1; a
// similarity is reported within [-1, 1], as a cosine is.
TEST(Dedup, SimilaritiesOfExactCopiesStayWithinOne) {
    auto backend = make_cpu_backend();
    const std::size_t dim = 384;
    const std::vector<float> base = test::random_unit_rows(40, dim, 7);
    std::vector<float> x;
    for (std::size_t i = 0; i < 40; ++i)
        for (int copy = 0; copy < 3; ++copy) x.insert(x.end(), base.begin() + i * dim, base.begin() + (i + 1) * dim);
    DedupOptions options;
    const DedupResult got = dedup_ideas(*backend, x.data(), 120, dim, {}, options);
    ASSERT_EQ(got.representative.size(), 40u);
    for (std::size_t i = 0; i < 120; ++i) {
        EXPECT_LE(got.mean_sim[i], 1.0) << i;
        EXPECT_GE(got.mean_sim[i], 1.0 - 1e-6) << i;
        EXPECT_LE(got.sim_to_representative[i], 1.0f) << i;
    }
}

// Two copies of one idea whose vectors differ in the last bits (as a batched encoder can give
// them): the pair's two means are equal in exact arithmetic, so the representative is the earlier
// copy in either order, never the one rounding happens to favour.
TEST(Dedup, NearCopiesKeepTheEarlierAsRepresentative) {
    auto backend = make_cpu_backend();
    const std::size_t dim = 384, pairs = 40;
    const std::vector<float> base = test::random_unit_rows(pairs, dim, 11);
    std::mt19937 rng(12);
    std::uniform_int_distribution<std::size_t> coordinate(0, dim - 1);
    std::vector<float> x;
    for (std::size_t i = 0; i < pairs; ++i) {
        std::vector<float> a(base.begin() + i * dim, base.begin() + (i + 1) * dim), b = a;
        for (int k = 0; k < 8; ++k) {  // nudge a few coordinates by a few units in the last place
            float& value = b[coordinate(rng)];
            value = std::nextafter(value, k % 2 ? 1.0f : -1.0f);
        }
        x.insert(x.end(), a.begin(), a.end());
        x.insert(x.end(), b.begin(), b.end());
        x.insert(x.end(), b.begin(), b.end());  // the same pair again, in the other order
        x.insert(x.end(), a.begin(), a.end());
    }
    // Each pair and its reversal form one cluster of four: copies 0..3 of idea i.
    DedupOptions options;
    options.threshold = 0.99f;
    const DedupResult got = dedup_ideas(*backend, x.data(), 4 * pairs, dim, {}, options);
    ASSERT_EQ(got.representative.size(), pairs);
    for (std::size_t c = 0; c < pairs; ++c) EXPECT_EQ(got.representative[c], 4 * c) << c;
}

}  // namespace
}  // namespace novelty
