// Metadata filters (novelty/corpus/paper_filter.hpp): the rows they allow, combined filters,
// their keys, and the "filter" object of query records.
#include "novelty/corpus/paper_filter.hpp"

#include "novelty/request/query_records.hpp"
#include "novelty/search/search.hpp"
#include "novelty/util/error.hpp"
#include "scoring_corpus.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

namespace novelty {
namespace {

// 30 papers "p0".."p29": field "a" for even i, "b" for odd; i % 7 citations.
struct FilterFixture : ::testing::Test {
    test::TempDir tmp;
    std::string dir;
    void SetUp() override {
        std::vector<float> v(30 * 3, 1.0f);
        std::vector<std::string> fields;
        for (int i = 0; i < 30; ++i) fields.push_back(i % 2 ? "b" : "a");
        dir = test::make_scoring_corpus(tmp, v, 3, fields);
    }
    /// The ids of the rows `filter` allows, sorted.
    static std::vector<std::string> allowed(const Corpus& corpus, const RowFilter& filter) {
        std::vector<std::string> ids;
        for (std::size_t row = 0; row < corpus.size(); ++row)
            if (filter.allows(static_cast<std::int64_t>(row))) ids.push_back(corpus.id_and_title(row).first);
        std::sort(ids.begin(), ids.end());
        return ids;
    }
    static std::vector<std::string> ids_where(const std::function<bool(int)>& keep) {
        std::vector<std::string> ids;
        for (int i = 0; i < 30; ++i)
            if (keep(i)) ids.push_back("p" + std::to_string(i));
        std::sort(ids.begin(), ids.end());
        return ids;
    }
};

TEST_F(FilterFixture, FieldsCitationsAndPapersEachAndTogether) {
    const Corpus corpus = Corpus::open(dir);
    PaperFilter field;
    field.fields = {"b"};
    EXPECT_EQ(allowed(corpus, rows_matching(corpus, field)), ids_where([](int i) { return i % 2 == 1; }));
    PaperFilter cited;
    cited.min_citations = 5;
    EXPECT_EQ(allowed(corpus, rows_matching(corpus, cited)), ids_where([](int i) { return i % 7 >= 5; }));
    PaperFilter listed;
    listed.papers = std::vector<std::string>{"p3", "p4", "p5", "p13", "unknown"};
    EXPECT_EQ(allowed(corpus, rows_matching(corpus, listed)), (std::vector<std::string>{"p13", "p3", "p4", "p5"}));
    // Odd, at least 5 citations (13 % 7 = 6, 5 % 7 = 5; 3 % 7 = 3) and listed.
    const PaperFilter all = field.and_also(cited).and_also(listed);
    EXPECT_EQ(allowed(corpus, rows_matching(corpus, all)), (std::vector<std::string>{"p13", "p5"}));
}

TEST_F(FilterFixture, DisjointListsAllowNothingAndKeysAreCanonical) {
    const Corpus corpus = Corpus::open(dir);
    PaperFilter a, b;
    a.fields = {"a"};
    b.fields = {"b"};
    EXPECT_EQ(rows_matching(corpus, a.and_also(b)).count(), 0u);
    PaperFilter venue;
    venue.venues = {"nowhere"};
    EXPECT_EQ(rows_matching(corpus, venue).count(), 0u);
    PaperFilter x, y;
    x.fields = {"b", "a", "b"};
    y.fields = {"a", "b"};
    EXPECT_EQ(x.key(), y.key());
    y.min_citations = 0;
    EXPECT_NE(x.key(), y.key());
    EXPECT_TRUE(PaperFilter{}.empty());
    EXPECT_FALSE(y.empty());
}

TEST_F(FilterFixture, TheCacheMakesEachMaskOnceAndCombinesRunAndRecord) {
    const Corpus corpus = Corpus::open(dir);
    RowFilterCache cache(corpus);
    EXPECT_EQ(cache.rows(PaperFilter{}), nullptr);  // no filter at all
    PaperFilter run;
    run.fields = {"b"};
    PaperFilter own;
    own.min_citations = 5;
    const auto both = cache.rows(run, own);
    ASSERT_NE(both, nullptr);
    EXPECT_EQ(allowed(corpus, *both), ids_where([](int i) { return i % 2 == 1 && i % 7 >= 5; }));
    PaperFilter same_run;
    same_run.fields = {"b", "b"};
    EXPECT_EQ(cache.rows(same_run, own), both);  // an equal filter: the same mask, not a new one
    EXPECT_EQ(allowed(corpus, *cache.rows(PaperFilter{}, own)), ids_where([](int i) { return i % 7 >= 5; }));
}

TEST(RecordFilter, ParsedFromRecordsWithClearErrors) {
    test::TempDir tmp;
    test::write_file(tmp.file("q.jsonl"),
                     "{\"id\": \"a\", \"filter\": {\"field\": \"cs\", \"venue\": [\"X\", \"Y\"], \"min_citations\": 3, "
                     "\"papers\": [\"p1\", 7]}}\n{\"id\": \"b\"}\n");
    const auto records = read_query_records(tmp.file("q.jsonl"));
    ASSERT_TRUE(records[0].filter);
    EXPECT_EQ(records[0].filter->fields, (std::vector<std::string>{"cs"}));
    EXPECT_EQ(records[0].filter->venues, (std::vector<std::string>{"X", "Y"}));
    EXPECT_EQ(records[0].filter->min_citations, 3);
    EXPECT_EQ(records[0].filter->papers, (std::vector<std::string>{"p1", "7"}));
    EXPECT_FALSE(records[1].filter);
    const std::pair<const char*, const char*> bad[] = {
        {"{\"id\": \"a\", \"filter\": 3}", "'filter' must be an object"},
        {"{\"id\": \"a\", \"filter\": {\"colour\": \"red\"}}", "unknown key 'colour'"},
        {"{\"id\": \"a\", \"filter\": {\"min_citations\": -1}}", "is negative"},
        {"{\"id\": \"a\", \"filter\": {\"min_citations\": 2.5}}", "must be a whole number"},
        {"{\"id\": \"a\", \"filter\": {\"field\": []}}", "'filter.field' is empty"},
        {"{\"id\": \"a\", \"filter\": {\"venue\": [1]}}", "'filter.venue' must hold strings"},
        {"{\"id\": \"a\", \"filter\": null}", "'filter' is null"},
        {"{\"id\": \"a\", \"filter\": {\"field\": \"\"}}", "'filter.field' is an empty name"},
        {"{\"id\": \"a\", \"filter\": {\"venue\": [\"X\", \" \"]}}", "'filter.venue' holds an empty name"},
        {"{\"id\": \"a\", \"filter\": {\"papers\": []}}", "'filter.papers' is empty"},
        {"{\"id\": \"a\", \"filter\": {\"min_citations\": 18446744073709551615}}", "beyond 2^63 - 1"},
    };
    for (const auto& [line, problem] : bad) {
        test::write_file(tmp.file("bad.jsonl"), std::string("{\"id\": \"ok\"}\n") + line + "\n");
        try {
            read_query_records(tmp.file("bad.jsonl"));
            ADD_FAILURE() << line;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();  // the line
        }
    }
}

// Filter values given as text: each empty or malformed one is refused, naming its parameter.
TEST(FilterInput, NamesAndFloorsAreCheckedWhereverTheyAreRead) {
    EXPECT_EQ(filter_names("cs.LG,stat.ML", "field"), (std::vector<std::string>{"cs.LG", "stat.ML"}));
    for (const char* list : {"", ",", "a,,b", "a,", " "}) {
        try {
            filter_names(list, "venue");
            ADD_FAILURE() << list;
        } catch (const UsageError& e) {
            EXPECT_EQ(e.parameter(), "venue") << list;
        }
    }
    EXPECT_EQ(parse_min_citations("0", "min_citations"), 0);
    EXPECT_EQ(parse_min_citations("9223372036854775807", "min_citations"), INT64_MAX);
    for (const char* text : {"", "99999999999999999999", "9223372036854775808", "-1", "0x10", "1e3", " 5", "5 "})
        EXPECT_THROW(parse_min_citations(text, "min_citations"), UsageError) << text;
}

TEST(FilterInput, PaperListsReadIdsJsonLinesAndAByteOrderMark) {
    test::TempDir tmp;
    test::write_file(tmp.file("p.txt"), "\xEF\xBB\xBF" "p1\n\n  doi:10.1/x \r\n{\"id\": \"p2\", \"title\": \"T\"}\n{\"id\": 7}\n");
    EXPECT_EQ(read_paper_list(tmp.file("p.txt")), (std::vector<std::string>{"p1", "doi:10.1/x", "p2", "7"}));
    const std::pair<const char*, std::size_t> bad[] = {{"p1\n{\"title\": \"no id\"}\n", 2}, {"{\"id\": \n", 1}, {"{\"id\": \"\"}\n", 1},
                                                       {"\n \n", 0}};
    for (const auto& [text, line] : bad) {
        test::write_file(tmp.file("bad.txt"), text);
        try {
            read_paper_list(tmp.file("bad.txt"));
            ADD_FAILURE() << text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), line) << e.what();
        }
    }
    test::write_file(tmp.file("v.txt"), "\xEF\xBB\xBF" "Knee Surgery, Sports Traumatology, Arthroscopy\n\n J A \n");
    EXPECT_EQ(read_name_file(tmp.file("v.txt")), (std::vector<std::string>{"Knee Surgery, Sports Traumatology, Arthroscopy", "J A"}));
    EXPECT_THROW(read_name_file(tmp.file("missing.txt")), InputError);
}

// The run's list and the record's are each resolved: the mask allows the rows both name, and
// unknown names are counted.
TEST_F(FilterFixture, PaperListsOfRunAndRecordMeetInRowsAndUnknownOnesAreCounted) {
    const Corpus corpus = Corpus::open(dir);
    RowFilterCache cache(corpus);
    PaperFilter run, own;
    run.papers = std::vector<std::string>{"p3", "p5", "p6"};
    own.papers = std::vector<std::string>{"p5", "p6", "p8"};
    own.fields = {"b"};
    EXPECT_EQ(allowed(corpus, *cache.rows(run, own)), (std::vector<std::string>{"p5"}));
    const UnknownPapers unknown = unknown_papers(corpus, {"p1", "x", "p2", "y", "z"}, 2);
    EXPECT_EQ(unknown.count, 3u);
    EXPECT_EQ(unknown.first, (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace novelty
