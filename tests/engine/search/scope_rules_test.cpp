// The one reading of a search scope that every backend applies (engine/src/search/scope_rules.hpp),
// and its mapping to a shard's rows (local_scope, engine/src/shard/shard_map.hpp).
#include "search/scope_rules.hpp"

#include "novelty/util/error.hpp"
#include "shard/shard_map.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace novelty {
namespace {

std::string scope_error(const SearchScope& scope, std::size_t n_queries, std::size_t n_rows) {
    try {
        check_scope(scope, n_queries, n_rows);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ScopeRules, RangesAreClampedToTheRowsAndBeginsToTheirLimits) {
    SearchScope scope;
    scope.row_limit = {0, 50, 1000};
    scope.row_begin = {5, 60, 10};
    const ScopeRules rules(scope, 3, 100);
    EXPECT_EQ(rules.limit(0), 0u);
    EXPECT_EQ(rules.begin(0), 0u);  // a begin past its limit leaves nothing
    EXPECT_EQ(rules.limit(1), 50u);
    EXPECT_EQ(rules.begin(1), 50u);
    EXPECT_EQ(rules.limit(2), 100u);
    EXPECT_EQ(rules.begin(2), 10u);
    const ScopeRules open(SearchScope{}, 3, 100);
    EXPECT_EQ(open.limit(1), 100u);
    EXPECT_EQ(open.begin(1), 0u);
    EXPECT_FALSE(open.has_begins() || open.has_filters());
    EXPECT_EQ(open.excluded(1), nullptr);
    EXPECT_EQ(open.self_row(1), -1);
}

TEST(ScopeRules, ExclusionsFiltersAndSelfRowsAreLeftOut) {
    SearchScope scope;
    scope.excluded.add({9, 3, 5, 3});
    scope.excluded.add({});
    auto filter = std::make_shared<RowFilter>(RowFilter::none(20));
    for (std::size_t r = 0; r < 20; r += 2) filter->allow(r);  // even rows only
    scope.filters = {filter, nullptr};
    scope.first_self_row = 4;  // query 0 is row 4, query 1 row 5
    const ScopeRules rules(scope, 2, 20);
    ASSERT_NE(rules.excluded(0), nullptr);
    EXPECT_EQ(*rules.excluded(0), (std::vector<std::int64_t>{3, 3, 5, 9}));
    EXPECT_EQ(rules.excluded(1), nullptr);
    EXPECT_EQ(rules.self_row(0), 4);
    EXPECT_EQ(rules.self_row(1), 5);
    EXPECT_FALSE(rules.keeps(0, 4));   // itself
    EXPECT_FALSE(rules.keeps(0, 7));   // odd: the filter
    EXPECT_TRUE(rules.keeps(0, 6));
    EXPECT_FALSE(rules.keeps(1, 5));   // itself
    EXPECT_TRUE(rules.keeps(1, 3));    // no filter, no exclusions for query 1
    EXPECT_FALSE(rules.allows(1, -1));
    EXPECT_FALSE(rules.allows(1, 20));
    RowLists lists;
    lists.add({12, 2, 12, 4, 9, 7, 6});
    lists.add({5, 3, 3, 25});
    EXPECT_EQ(rules.candidates(lists, 0), (std::vector<std::int64_t>{2, 6, 12}));
    EXPECT_EQ(rules.candidates(lists, 1), (std::vector<std::int64_t>{3}));
    std::vector<std::int64_t> offsets, rows;
    rules.excluded_lists(0, 2, offsets, rows);
    EXPECT_EQ(offsets, (std::vector<std::int64_t>{0, 4, 4}));
    EXPECT_EQ(rows, (std::vector<std::int64_t>{3, 3, 5, 9}));
    rules.excluded_lists(1, 1, offsets, rows);  // none among these queries: nothing to upload
    EXPECT_TRUE(offsets.empty() && rows.empty());
}

TEST(ScopeRules, BadShapesAreRefusedNamingTheField) {
    SearchScope scope;
    scope.row_limit = {1, 2};
    EXPECT_EQ(scope_error(scope, 1, 10), "row_limit has 2 entries for 1 queries");
    scope = {};
    scope.row_begin = {1};
    EXPECT_EQ(scope_error(scope, 2, 10), "row_begin has 1 entries for 2 queries");
    scope = {};
    scope.excluded.add({1});
    EXPECT_EQ(scope_error(scope, 3, 10), "excluded has 1 lists for 3 queries");
    scope = {};
    scope.filters = {nullptr, nullptr};
    EXPECT_NE(scope_error(scope, 3, 10).find("filters has 2 entries for 3 queries"), std::string::npos);
    scope.filters = {std::make_shared<RowFilter>(RowFilter::none(9))};
    EXPECT_NE(scope_error(scope, 3, 10).find("a filter covers 9 rows but the index has 10"), std::string::npos);
    scope = {};
    scope.first_self_row = 8;
    EXPECT_EQ(scope_error(scope, 2, 10), "no error");
    EXPECT_NE(scope_error(scope, 3, 10).find("past the index's 10 rows"), std::string::npos);
}

TEST(ScopeRules, AShardMapsSelfRowsToExclusionsOfTheRowsItHolds) {
    const ShardMap map{10, 3, 1};  // rank 1 of 3 holds global rows 1, 4, 7 (local 0, 1, 2)
    SearchScope scope;
    scope.row_limit = {10, 5, 10};
    scope.row_begin = {0, 2, 5};
    scope.first_self_row = 3;  // queries are rows 3, 4, 5
    scope.excluded.add({7, 2});
    scope.excluded.add({});
    scope.excluded.add({1});
    const SearchScope local = local_scope(scope, 3, map);
    EXPECT_EQ(local.first_self_row, -1);
    EXPECT_EQ(local.row_limit, (std::vector<std::size_t>{3, 2, 3}));
    EXPECT_EQ(local.row_begin, (std::vector<std::size_t>{0, 1, 2}));
    ASSERT_EQ(local.excluded.n_items(), 3u);
    EXPECT_EQ(std::vector<std::int64_t>(local.excluded.begin(0), local.excluded.begin(0) + local.excluded.size(0)),
              (std::vector<std::int64_t>{2}));  // row 7; row 2 is on another shard, row 3 too
    EXPECT_EQ(std::vector<std::int64_t>(local.excluded.begin(1), local.excluded.begin(1) + local.excluded.size(1)),
              (std::vector<std::int64_t>{1}));  // itself: global row 4
    EXPECT_EQ(std::vector<std::int64_t>(local.excluded.begin(2), local.excluded.begin(2) + local.excluded.size(2)),
              (std::vector<std::int64_t>{0}));  // global row 1; itself (row 5) is elsewhere
}

}  // namespace
}  // namespace novelty
