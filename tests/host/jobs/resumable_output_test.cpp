// host::ResumableOutput: records through OUT.partial, resumed after an interruption, OUT written
// in input order; JSON Lines and CSV (quoted ids, the header kept once).
#include "novelty_host/jobs/resumable_output.hpp"

#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

namespace novelty::host {
namespace {

using Format = ResumableOutput::Format;

/// The file's inode: a rename keeps it, a copy into a new file does not.
ino_t inode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

TEST(ResumableOutput, CsvResumesQuotedIdsAndKeepsOneHeader) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.csv");
    {
        ResumableOutput first(out, false, Format::csv, "id,score");
        first.write("b", "b,2");
        first.write("a,\"x\"", "\"a,\"\"x\"\"\",1");
    }  // interrupted: no finish()
    // A line cut short by the interruption is dropped.
    std::ofstream(out + ".partial", std::ios::app) << "c,3";
    EXPECT_THROW(ResumableOutput(out, false, Format::csv, "id,score"), UsageError);
    ResumableOutput second(out, true, Format::csv, "id,score");
    EXPECT_EQ(second.done(), (std::set<std::string>{"b", "a,\"x\""}));
    second.write("c", "c,3");
    EXPECT_EQ(second.finish({"a,\"x\"", "b", "c"}), 3u);
    EXPECT_EQ(test::read_file(out), "id,score\n\"a,\"\"x\"\"\",1\nb,2\nc,3\n");
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

TEST(ResumableOutput, JsonLinesRedoRecordsWithAnError) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.jsonl");
    {
        ResumableOutput first(out, false);
        first.write("a", R"({"id":"a","v":1})");
        first.write("b", R"({"id":"b","error":"timeout"})");
    }
    ResumableOutput second(out, true);
    EXPECT_EQ(second.done(), (std::set<std::string>{"a"}));
    second.write("b", R"({"id":"b","v":2})");
    second.finish({"b", "a"});
    EXPECT_EQ(test::read_file(out), "{\"id\":\"b\",\"v\":2}\n{\"id\":\"a\",\"v\":1}\n");
}

TEST(ResumableOutput, RecordsAlreadyInInputOrderAreRenamedIntoPlace) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.jsonl");
    test::write_file(out, "old\n");
    ResumableOutput output(out, false, Format::jsonl, "", "query");
    output.write_lines({"a", "b"}, "{\"query\":\"a\"}\n{\"query\":\"b\"}\n");
    output.write("c", R"({"query":"c"})");
    EXPECT_EQ(test::read_file(out), "old\n");  // untouched until finish()
    const ino_t partial = inode_of(out + ".partial");
    EXPECT_EQ(output.finish({"a", "b", "c"}), 3u);
    EXPECT_EQ(test::read_file(out), "{\"query\":\"a\"}\n{\"query\":\"b\"}\n{\"query\":\"c\"}\n");
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
    EXPECT_EQ(inode_of(out), partial);  // the partial itself, renamed: no copy was made
}

TEST(ResumableOutput, RecordsOutOfInputOrderAreCopiedInOrder) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.jsonl");
    ResumableOutput output(out, false, Format::jsonl, "", "query");
    output.write_lines({"b", "a"}, "{\"query\":\"b\"}\n{\"query\":\"a\"}\n");
    const ino_t partial = inode_of(out + ".partial");
    EXPECT_EQ(output.finish({"a", "b"}), 2u);
    EXPECT_EQ(test::read_file(out), "{\"query\":\"a\"}\n{\"query\":\"b\"}\n");
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
    EXPECT_NE(inode_of(out), partial);
}

TEST(ResumableOutput, BlocksOfLinesResumeUnderTheirIdKeyAndAreReordered) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.jsonl");
    {
        ResumableOutput first(out, false, Format::jsonl, "", "query");
        first.write_lines({"c", "a"}, "{\"query\":\"c\",\"n\":3}\n{\"query\":\"a\",\"n\":1}\n");
        // A line count that differs from the ids is refused, and nothing of it is written.
        EXPECT_THROW(first.write_lines({"b"}, "{\"query\":\"b\"}\n{\"query\":\"x\"}\n"), Error);
        EXPECT_THROW(first.write_lines({"b"}, "{\"query\":\"b\"}"), Error);
    }
    ResumableOutput second(out, true, Format::jsonl, "", "query");
    EXPECT_EQ(second.done(), (std::set<std::string>{"a", "c"}));
    second.write("b", R"({"query":"b","n":2})");
    second.write("z", R"({"query":"z","n":26})");  // not among the ids: last
    EXPECT_EQ(second.finish({"a", "b", "c"}), 4u);
    EXPECT_EQ(test::read_file(out),
              "{\"query\":\"a\",\"n\":1}\n{\"query\":\"b\",\"n\":2}\n{\"query\":\"c\",\"n\":3}\n"
              "{\"query\":\"z\",\"n\":26}\n");
}

TEST(ResumableOutput, AnIdWrittenTwiceKeepsItsLastLine) {
    test::TempDir tmp;
    const std::string out = tmp.file("out.jsonl");
    ResumableOutput output(out, false);
    output.write("a", R"({"id":"a","v":1})");
    output.write("a", R"({"id":"a","v":2})");
    EXPECT_EQ(output.finish({"a"}), 1u);
    EXPECT_EQ(test::read_file(out), "{\"id\":\"a\",\"v\":2}\n");
}

}  // namespace
}  // namespace novelty::host
