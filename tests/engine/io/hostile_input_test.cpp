// Hostile input to the readers (issue 22): JSON nested deep enough to exhaust the stack, numbers
// out of range, bytes that are not UTF-8, lines of megabytes, pipes and FIFOs. Each is a clear
// error naming the file and line (or skippable with skip_invalid), never a crash, a hang or a
// message that copies the input.
#include "io/json/json_parse.hpp"
#include "io/jsonl.hpp"
#include "novelty/util/checksum.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "util/message_text.hpp"
#include "test_util.hpp"
#include "io/text_lines.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

using namespace novelty;
using novelty::test::TempDir;
using novelty::test::write_file;

namespace {

bool valid_utf8(const std::string& s) { return find_invalid_utf8(s) == std::string::npos; }

std::string json_error_of(const std::string& text) {
    try {
        parse_json(text);
    } catch (const JsonError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(JsonParse, RefusesDeepNestingBeforeBuildingIt) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_NE(json_error_of(deep).find("nested deeper than 128 levels"), std::string::npos);
    const std::string deep_object = "{\"a\":" + std::string(90000, '[') + "1" + std::string(90000, ']') + "}";
    EXPECT_NE(json_error_of(deep_object).find("nested deeper"), std::string::npos);
    // At the limit it parses; brackets inside strings do not count.
    const std::string at_limit = std::string(max_json_depth, '[') + std::string(max_json_depth, ']');
    EXPECT_NO_THROW(parse_json(at_limit));
    EXPECT_EQ(json_error_of(std::string(max_json_depth + 1, '[') + std::string(max_json_depth + 1, ']')).empty(), false);
    const std::string in_string = "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
    EXPECT_EQ(parse_json(in_string)["a"].get<std::string>().size(), 2001u);
}

TEST(JsonParse, NumbersOutOfRangeAndBadBytesAreJsonErrors) {
    EXPECT_NE(json_error_of("{\"x\": 1e999}").find("number out of range"), std::string::npos);
    EXPECT_NE(json_error_of("[-1e400]").find("number out of range"), std::string::npos);
    const std::string bad_utf8 = json_error_of("{\"t\": \"caf\xE9\"}");
    EXPECT_FALSE(bad_utf8.empty());
    EXPECT_TRUE(valid_utf8(bad_utf8)) << "the message must be printable as UTF-8";
    // A 5 MB token is not copied into the message.
    const std::string long_token = json_error_of("{\"t\": " + std::string(5 << 20, 'x') + "}");
    EXPECT_FALSE(long_token.empty());
    EXPECT_LT(long_token.size(), 500u);
    EXPECT_NO_THROW(parse_json("{\"big\": 1e308, \"small\": 1e-400}"));  // underflow is 0, not an error
}

// The one wording every edge uses for a value of the wrong type (files, HTTP bodies, eval records).
TEST(JsonParse, TypeWordsNameEachType) {
    EXPECT_EQ(json_type_words(parse_json("null")), "null");
    EXPECT_EQ(json_type_words(parse_json("true")), "a boolean");
    EXPECT_EQ(json_type_words(parse_json("\"12\"")), "a string");
    EXPECT_EQ(json_type_words(parse_json("[1]")), "an array");
    EXPECT_EQ(json_type_words(parse_json("{}")), "an object");
    EXPECT_EQ(json_type_words(parse_json("-3")), "a number");
    EXPECT_EQ(json_type_words(parse_json("18446744073709551615")), "a number");
    EXPECT_EQ(json_type_words(parse_json("2.5")), "a number");
}

TEST(MessageText, CutsLongValuesAndEscapesBadBytes) {
    const std::string big(20 << 20, 'a');
    const std::string q = quote_value(big);
    EXPECT_LT(q.size(), 260u);
    EXPECT_NE(q.find("(20971520 bytes)"), std::string::npos) << q;
    EXPECT_EQ(quote_value("short"), "'short'");
    EXPECT_EQ(clip_for_message("a\nb\xFF"), "a\\nb\\xFF");
    // A character is never cut in two, and the result is always UTF-8.
    const std::string cjk = std::string(199, 'x') + "\xE4\xB8\xAD" + "tail";
    const std::string clipped = clip_for_message(cjk);
    EXPECT_TRUE(valid_utf8(clipped));
    EXPECT_EQ(clipped.substr(0, 199), std::string(199, 'x'));
    EXPECT_EQ(clipped.find("\xE4"), std::string::npos);
}

TEST(LineReaderCap, LongLineIsAnErrorNamingLineAndCapAndReadingGoesOn) {
    TempDir tmp;
    write_file(tmp.file("f.txt"), "short\n" + std::string(5000, 'x') + "\nafter\n" + std::string(3000, 'y'));
    LineReader reader(tmp.file("f.txt"), 1000);
    std::string line;
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "short");
    try {
        reader.next(line);
        FAIL() << "a 5000-byte line passed a 1000-byte cap";
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 2u);
        EXPECT_NE(e.problem().find("longer than the limit of 1000 bytes"), std::string::npos) << e.what();
        EXPECT_LT(std::string(e.what()).size(), 400u);
    }
    ASSERT_TRUE(reader.next(line));
    EXPECT_EQ(line, "after");
    EXPECT_EQ(reader.line_number(), 3u);
    EXPECT_THROW(reader.next(line), InputError);  // the last line, without a newline, is too long too
    EXPECT_FALSE(reader.next(line));
}

TEST(LineReaderOnce, ChecksumIsOfTheBytesReadAndMatchesTheFile) {
    TempDir tmp;
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i) + "\n";
    write_file(tmp.file("f.txt"), text);
    LineReader reader(tmp.file("f.txt"));
    std::string line;
    std::size_t n = 0;
    while (reader.next(line)) ++n;
    EXPECT_EQ(n, 5000u);
    EXPECT_EQ(reader.sha256(), sha256_file(tmp.file("f.txt")));
}

// A FIFO can be read once only: the old importer checksummed it first, then found it empty (or
// waited forever for a second writer).
TEST(ImportOnce, FromAFifoImportsEveryRecord) {
    TempDir tmp;
    const std::string fifo = tmp.file("in.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string records;
    for (int i = 0; i < 200; ++i)
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"T" + std::to_string(i) + "\", \"year\": 2001}\n";
    std::thread writer([&] {
        std::ofstream out(fifo, std::ios::binary);  // blocks until the importer opens it
        out << records;
    });
    ImportOptions options;
    options.sources.push_back({fifo, ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    ImportSummary summary;
    try {
        summary = import_corpus(options);
    } catch (...) {
        writer.join();
        throw;
    }
    writer.join();
    EXPECT_EQ(summary.n_papers, 200u);
    const Corpus corpus = Corpus::open(tmp.file("c"));
    EXPECT_EQ(corpus.manifest().sources.at(0).sha256, sha256_hex(records));
}

TEST(ImportHostile, EveryBadLineNamesFileAndLineAndIsSkippable) {
    TempDir tmp;
    const std::string good = "{\"id\": \"g1\", \"title\": \"Good\", \"year\": 2001}\n";
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"{\"id\": \"a\", \"title\": \"T\", \"x\": " + std::string(100000, '[') + "}", "nested deeper"},
        {"{\"id\": \"b\", \"title\": \"T\", \"citations\": 1e999}", "number out of range"},
        {"\xC3\xA9{\"id\": \"c\"}", "malformed JSON"},  // valid UTF-8, not JSON; the message holds a cut character
        {"{\"id\": \"d\", \"title\": \"T\", \"date\": \"" + std::string(1 << 20, '9') + "\"}", "unparseable date"},
    };
    std::string all = good;
    for (const auto& [line, problem] : bad) all += line + "\n";
    all += "{\"id\": \"g2\", \"title\": \"Also good\", \"year\": 2002}\n";
    write_file(tmp.file("in.jsonl"), all);
    for (std::size_t i = 0; i < bad.size(); ++i) {  // without skipping: each fails on its own line
        write_file(tmp.file("one.jsonl"), good + bad[i].first + "\n");
        ImportOptions options;
        options.sources.push_back({tmp.file("one.jsonl"), ImportFormat::jsonl, ""});
        options.out_dir = tmp.file("none");
        try {
            import_corpus(options);
            FAIL() << "accepted: " << bad[i].second;
        } catch (const InputError& e) {
            EXPECT_EQ(e.line(), 2u) << e.what();
            EXPECT_NE(e.problem().find(bad[i].second), std::string::npos) << e.what();
            EXPECT_LT(std::string(e.what()).size(), 700u) << "the message copies the line";
        }
    }
    ImportOptions options;
    options.sources.push_back({tmp.file("in.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    options.skip_invalid = true;
    const auto summary = import_corpus(options);
    EXPECT_EQ(summary.n_papers, 2u);
    EXPECT_EQ(summary.n_skipped, bad.size());
    const std::string manifest = test::read_file(tmp.file("c") + "/manifest.json");
    EXPECT_LT(manifest.size(), 20000u) << "the manifest copies skipped lines";
    EXPECT_TRUE(valid_utf8(manifest));
}
