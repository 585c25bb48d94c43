#include "novelty/util/error.hpp"
#include "novelty/request/query_records.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

using namespace novelty;
using novelty::test::TempDir;

TEST(QueryRecords, ReadsIdsTextDatesAndExclusions) {
    TempDir tmp;
    test::write_file(tmp.file("q.jsonl"),
                     "{\"id\": \"a\", \"title\": \"T\", \"text\": \"body\", \"date\": \"2020-05\", \"exclude\": [\"x\", 7], \"pool\": [\"p\", 9]}\n"
                     "\n"
                     "{\"id\": 12, \"abstract\": \"only an abstract\", \"extra\": true}\n");
    const auto records = read_query_records(tmp.file("q.jsonl"));
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].id, "a");
    EXPECT_EQ(records[0].title, "T");
    EXPECT_EQ(records[0].text, "body");
    EXPECT_EQ(records[0].date->text(), "2020-05");
    EXPECT_EQ(records[0].exclude, (std::vector<std::string>{"x", "7"}));
    EXPECT_EQ(records[0].pool, (std::vector<std::string>{"p", "9"}));
    EXPECT_FALSE(records[1].pool);  // no "pool": none (not an empty one)
    EXPECT_EQ(records[1].id, "12");
    EXPECT_EQ(records[1].text, "only an abstract");
    EXPECT_EQ(records[1].line, 3u);
    EXPECT_TRUE(records[1].has_text());
}

TEST(QueryRecords, ErrorsNameFileAndLine) {
    struct Case {
        const char* text;
        std::size_t line;
        const char* phrase;
    };
    for (const Case& c : {Case{"{\"title\": \"no id\"}\n", 1, "missing 'id'"},
                          Case{"{\"id\": \"a\"}\n{\"id\": \"a\"}\n", 2, "duplicate id 'a' (first at line 1)"},
                          Case{"{\"id\": \"a\", \"date\": \"May 2020\"}\n", 1, "unparseable date 'May 2020'"},
                          Case{"{\"id\": \"a\", \"exclude\": \"b\"}\n", 1, "'exclude' must be an array"},
                          Case{"{\"id\": \"a\"}\n{\"id\": \"b\", \"pool\": \"p1\"}\n", 2, "'pool' must be an array"},
                          Case{"{\"id\": \"a\", \"pool\": [1.5]}\n", 1, "'pool' must hold paper ids"},
                          Case{"{\"id\": \"a\", \"pool\": []}\n", 1, "'pool' is empty"},
                          Case{"{\"id\": \"a\", \"title\": 3}\n", 1, "'title' must be a string"},
                          Case{"", 0, "holds no records"}}) {
        TempDir tmp;
        test::write_file(tmp.file("q.jsonl"), c.text);
        try {
            read_query_records(tmp.file("q.jsonl"));
            FAIL() << c.phrase;
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), c.line) << e.what();
            EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_cutoff("2021-02-30"), UsageError);
    EXPECT_EQ(parse_cutoff("2021-02").effective(), "2021-02-28");
}
