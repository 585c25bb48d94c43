// update_self_join against a full recomputation: rows added between old ones (renumbering),
// appended, deleted and replaced, with tied similarities, must give the very same join.
#include "scoring/self_join_update.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/error.hpp"
#include "search_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace novelty;

namespace {

struct Change {
    std::vector<float> vectors;                 // the new corpus, normalised
    std::vector<std::int64_t> old_row_of_new;  // -1 for new rows
};

// Builds a new corpus from `old` (n x dim): deletes `n_deleted` rows, inserts `n_added` fresh
// rows at random places (some copies of kept rows, to make ties), keeping kept rows in order.
Change change(const std::vector<float>& old, std::size_t dim, std::size_t n_added, std::size_t n_deleted,
              std::uint32_t seed) {
    const std::size_t n = old.size() / dim;
    std::mt19937 rng(seed);
    std::vector<char> deleted(n, 0);
    for (std::size_t d = 0; d < n_deleted;) {
        const std::size_t r = rng() % n;
        if (!deleted[r]) { deleted[r] = 1; ++d; }
    }
    const auto fresh = test::random_unit_rows(n_added, dim, seed + 1);
    Change c;
    std::size_t next_fresh = 0;
    for (std::size_t r = 0; r <= n; ++r) {
        while (next_fresh < n_added && rng() % (n / std::max<std::size_t>(n_added, 1) + 1) == 0) {
            const float* src = fresh.data() + next_fresh * dim;
            if (next_fresh % 5 == 0 && r < n) src = old.data() + r * dim;  // a tie with a kept row
            c.vectors.insert(c.vectors.end(), src, src + dim);
            c.old_row_of_new.push_back(-1);
            ++next_fresh;
        }
        if (r < n && !deleted[r]) {
            c.vectors.insert(c.vectors.end(), old.begin() + static_cast<std::ptrdiff_t>(r * dim),
                             old.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
            c.old_row_of_new.push_back(static_cast<std::int64_t>(r));
        }
    }
    for (; next_fresh < n_added; ++next_fresh) {
        c.vectors.insert(c.vectors.end(), fresh.begin() + static_cast<std::ptrdiff_t>(next_fresh * dim),
                         fresh.begin() + static_cast<std::ptrdiff_t>((next_fresh + 1) * dim));
        c.old_row_of_new.push_back(-1);
    }
    return c;
}

SelfJoin full_join(const std::vector<float>& vectors, std::size_t dim, std::size_t q, std::size_t k) {
    auto index = make_cpu_backend()->build(VectorView::of(vectors, dim));
    return index->self_join(vectors.size() / dim, q, k);
}

// Bit for bit when `exact`. Otherwise (tiny matrices, where OpenBLAS may take its small-matrix
// kernels for one product and not the other, so a dot product can differ in its last bit) the
// same rows, similarities within 1e-6.
void expect_same_join(const SelfJoin& a, const SelfJoin& b, bool exact = true) {
    ASSERT_EQ(a.n_rows, b.n_rows);
    ASSERT_EQ(a.k_stored, b.k_stored);
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
        ASSERT_EQ(a.rows[i], b.rows[i]) << "row " << i / a.k_stored << " rank " << i % a.k_stored;
        if (exact) ASSERT_EQ(a.sims[i], b.sims[i]) << "row " << i / a.k_stored << " rank " << i % a.k_stored;
        else if (a.rows[i] >= 0) ASSERT_NEAR(a.sims[i], b.sims[i], 1e-6) << "row " << i / a.k_stored << " rank " << i % a.k_stored;
    }
    if (exact) ASSERT_EQ(std::memcmp(a.density.data(), b.density.data(), a.density.size() * sizeof(float)), 0);
    else
        for (std::size_t r = 0; r < a.n_rows; ++r)
            if (!std::isnan(b.density[r])) ASSERT_NEAR(a.density[r], b.density[r], 1e-6);
            else ASSERT_TRUE(std::isnan(a.density[r]));
}

}  // namespace

TEST(SelfJoinUpdate, EqualsAFullRecomputationAfterAddsDeletesAndRenumbering) {
    const std::size_t dim = 37, q = 10, k = 14;
    struct Case { std::size_t n, added, deleted; };
    for (const Case c : {Case{600, 6, 0}, Case{600, 60, 0}, Case{600, 0, 9}, Case{600, 25, 12}, Case{1500, 150, 15},
                         Case{20, 3, 0}, Case{12, 2, 1}}) {
        SCOPED_TRACE(testing::Message() << "n=" << c.n << " added=" << c.added << " deleted=" << c.deleted);
        const auto old = test::random_unit_rows(c.n, dim, static_cast<std::uint32_t>(c.n + c.added));
        const SelfJoin old_join = full_join(old, dim, q, k);
        const Change ch = change(old, dim, c.added, c.deleted, 7);
        SelfJoinUpdateStats stats;
        const SelfJoin updated = update_self_join(old_join, ch.old_row_of_new, VectorView::of(ch.vectors, dim), 0, &stats);
        expect_same_join(updated, full_join(ch.vectors, dim, q, k), c.n >= 100);
        EXPECT_EQ(stats.new_rows, c.added);
        // Only the new rows and the rows that lost a neighbour were searched in full.
        EXPECT_LE(stats.dirty_rows, c.deleted * k + c.deleted);
        if (c.deleted == 0) EXPECT_EQ(stats.dirty_rows, 0u);
    }
}

TEST(SelfJoinUpdate, Float16CorporaToo) {
    const std::size_t dim = 16, q = 5, k = 8;
    const auto old32 = test::random_unit_rows(300, dim, 11);
    const Change ch = change(old32, dim, 20, 4, 3);
    auto to_f16 = [](const std::vector<float>& v) {
        std::vector<std::uint16_t> h(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) h[i] = float_to_half(v[i]);
        return h;
    };
    const auto old16 = to_f16(old32), new16 = to_f16(ch.vectors);
    const VectorView old_view{old16.data(), DType::f16, 300, dim};
    const VectorView new_view{new16.data(), DType::f16, new16.size() / dim, dim};
    const SelfJoin old_join = make_cpu_backend()->build(old_view)->self_join(300, q, k);
    const SelfJoin updated = update_self_join(old_join, ch.old_row_of_new, new_view);
    expect_same_join(updated, make_cpu_backend()->build(new_view)->self_join(new_view.n_rows, q, k));
}

TEST(SelfJoinUpdate, OnlyTheNewRowsChangeNothingElseWhenTheyAreFar) {
    // Appended rows far from every old one (the opposite direction of all of them) enter no
    // stored list: the old rows keep their neighbours and densities.
    const std::size_t dim = 8, q = 3, k = 5;
    std::vector<float> old;
    for (std::size_t i = 0; i < 40; ++i) {
        std::vector<float> v(dim, 0.0f);
        v[0] = 1.0f;
        v[1 + i % 7] = 0.05f * static_cast<float>(i % 5 + 1);
        float norm = 0;
        for (float x : v) norm += x * x;
        for (float& x : v) old.push_back(x / std::sqrt(norm));
    }
    const SelfJoin old_join = full_join(old, dim, q, k);
    std::vector<float> grown = old;
    std::vector<std::int64_t> map;
    for (std::int64_t i = 0; i < 40; ++i) map.push_back(i);
    for (std::size_t i = 0; i < 3; ++i) {
        std::vector<float> v(dim, 0.0f);
        v[0] = -1.0f;
        grown.insert(grown.end(), v.begin(), v.end());
        map.push_back(-1);
    }
    SelfJoinUpdateStats stats;
    const SelfJoin updated = update_self_join(old_join, map, VectorView::of(grown, dim), 0, &stats);
    EXPECT_EQ(stats.entered_rows, 0u);
    EXPECT_EQ(stats.dirty_rows, 0u);
    for (std::size_t i = 0; i < 40 * k; ++i) EXPECT_EQ(updated.rows[i], old_join.rows[i]);
    expect_same_join(updated, full_join(grown, dim, q, k), false);
}

TEST(SelfJoinUpdate, RefusesAMapThatDoesNotFit) {
    const auto old = test::random_unit_rows(50, 8, 1);
    const SelfJoin join = full_join(old, 8, 4, 6);
    std::vector<std::int64_t> map(50);
    for (std::size_t i = 0; i < 50; ++i) map[i] = static_cast<std::int64_t>(i);
    map[3] = 50;  // past the old corpus
    EXPECT_THROW(update_self_join(join, map, VectorView::of(old, 8)), UsageError);
    map.pop_back();
    EXPECT_THROW(update_self_join(join, map, VectorView::of(old, 8)), UsageError);
}

TEST(SelfJoinUpdate, AppendedRowsExtendTheMovedOldListsToWhatAFullRecomputationGives) {
    // Rows only appended (old row r stays row r): the old lists are extended (no row is dirty)
    // to what a full join gives. New rows near old ones (copies, for ties) enter their lists.
    const std::size_t dim = 37, q = 10, k = 14, n = 600, added = 40;
    const auto old = test::random_unit_rows(n, dim, 11);
    const SelfJoin old_join = full_join(old, dim, q, k);
    std::vector<float> grown = old;
    const auto fresh = test::random_unit_rows(added, dim, 12);
    std::vector<std::int64_t> map;
    for (std::size_t r = 0; r < n; ++r) map.push_back(static_cast<std::int64_t>(r));
    for (std::size_t i = 0; i < added; ++i) {
        const float* src = i % 4 == 0 ? old.data() + (i * 13) * dim : fresh.data() + i * dim;
        grown.insert(grown.end(), src, src + dim);
        map.push_back(-1);
    }
    SelfJoinUpdateStats stats;
    const SelfJoin updated = update_self_join(old_join, map, VectorView::of(grown, dim), 0, &stats);
    expect_same_join(updated, full_join(grown, dim, q, k));
    EXPECT_EQ(stats.new_rows, added);
    EXPECT_EQ(stats.dirty_rows, 0u);
    EXPECT_GT(stats.entered_rows, 0u);
}
