// host::ResumableOutput: records through OUT.partial, resumed after an interruption, OUT written
// in input order; JSON Lines and CSV (quoted ids, the header kept once).
#include "novelty_host/jobs/resumable_output.hpp"

#include "novelty/util/error.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace novelty::host {
namespace {

using Format = ResumableOutput::Format;

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

}  // namespace
}  // namespace novelty::host
