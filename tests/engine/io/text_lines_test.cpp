#include "io/jsonl.hpp"
#include "novelty/util/error.hpp"
#include "test_util.hpp"
#include "io/text_lines.hpp"

#include <gtest/gtest.h>

#include <zlib.h>

using novelty::InputError;
using novelty::find_invalid_utf8;
using novelty::JsonlReader;
using novelty::LineReader;
using novelty::test::TempDir;
using novelty::test::write_file;

TEST(Utf8, AcceptsValidAndFindsInvalidBytes) {
    EXPECT_EQ(find_invalid_utf8("plain ascii"), std::string_view::npos);
    EXPECT_EQ(find_invalid_utf8("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80"), std::string_view::npos);
    EXPECT_EQ(find_invalid_utf8("caf\xE9"), 3u);               // latin-1 e-acute
    EXPECT_EQ(find_invalid_utf8("ab\xC0\xAF"), 2u);            // overlong '/'
    EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);         // UTF-16 surrogate
    EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);      // above U+10FFFF
    EXPECT_EQ(find_invalid_utf8("ok\xE4\xB8"), 2u);            // cut short
    EXPECT_EQ(find_invalid_utf8("\x80"), 0u);                  // stray continuation byte
}

TEST(LineReader, ReadsPlainAndGzipWithLineNumbers) {
    TempDir tmp;
    const std::string text = "first\r\nsecond\n\nfourth without newline";
    write_file(tmp.file("plain.txt"), text);
    gzFile gz = gzopen(tmp.file("packed.txt.gz").c_str(), "wb");
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    for (const char* name : {"plain.txt", "packed.txt.gz"}) {
        LineReader reader(tmp.file(name));
        std::string line;
        std::vector<std::string> lines;
        while (reader.next(line)) lines.push_back(line);
        ASSERT_EQ(lines.size(), 4u) << name;
        EXPECT_EQ(lines[0], "first");
        EXPECT_EQ(lines[1], "second");
        EXPECT_EQ(lines[2], "");
        EXPECT_EQ(lines[3], "fourth without newline");
        EXPECT_EQ(reader.line_number(), 4u);
    }
}

TEST(LineReader, ReadsLinesLongerThanItsBuffer) {
    TempDir tmp;
    const std::string long_line(1 << 20, 'x');
    write_file(tmp.file("long.txt"), long_line + "\nshort\n");
    LineReader reader(tmp.file("long.txt"));
    std::string line;
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line.size(), long_line.size());
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "short");
    EXPECT_FALSE(reader.next(line));
}

TEST(LineReader, MissingFileNamesThePath) {
    try {
        LineReader reader("/nonexistent/dir/file.jsonl");
        FAIL() << "no exception";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/file.jsonl"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
    }
}

TEST(LineReader, TruncatedGzipIsAnError) {
    LineReader reader(novelty::test::fixture("import/truncated.jsonl.gz"));
    std::string line;
    try {
        while (reader.next(line)) {
        }
        FAIL() << "a truncated gzip stream read as complete";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("truncated.jsonl.gz"), std::string::npos);
    }
}

TEST(JsonlReader, NamesFileAndLineOfEachProblem) {
    struct Case {
        const char* fixture;
        std::size_t line;
        const char* phrase;
    };
    for (const Case& c : {Case{"import/malformed.jsonl", 2, "malformed JSON"},
                          Case{"import/non_utf8.jsonl", 2, "invalid UTF-8: byte 0xE9 at column 27"},
                          Case{"import/not_object.jsonl", 1, "expected a JSON object, found an array"}}) {
        JsonlReader reader(novelty::test::fixture(c.fixture));
        nlohmann::json record;
        try {
            while (reader.next(record)) {
            }
            FAIL() << c.fixture << " read without error";
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), c.line) << c.fixture;
            EXPECT_NE(std::string(e.what()).find(c.fixture), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(c.phrase), std::string::npos) << e.what();
        }
    }
}

TEST(JsonlReader, SkipsBlankLinesAndByteOrderMark) {
    TempDir tmp;
    write_file(tmp.file("bom.jsonl"), "\xEF\xBB\xBF{\"id\": 1}\n   \n\n{\"id\": 2}\n");
    JsonlReader reader(tmp.file("bom.jsonl"));
    nlohmann::json record;
    ASSERT_TRUE(reader.next(record));
    EXPECT_EQ(record["id"], 1);
    EXPECT_EQ(reader.line_number(), 1u);
    ASSERT_TRUE(reader.next(record));
    EXPECT_EQ(record["id"], 2);
    EXPECT_EQ(reader.line_number(), 4u);
    EXPECT_FALSE(reader.next(record));
}
