// The output stage of novelty search: JSON text written directly (byte for byte nlohmann's
// dump()), ids and titles looked up in one pass (Corpus::labels), the parallel line formatter,
// and the .npz arrays (read back here with a minimal zip and .npy reader).
#include "io/json_text.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/util/error.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/io/npz.hpp"
#include "novelty/request/result_json.hpp"
#include "search_reference.hpp"
#include "json_lines.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>

using namespace novelty;
using novelty::test::run_cli;
using novelty::test::shell_quote;
using novelty::test::TempDir;

namespace {

// n papers with ids p0..p{n-1}, titles with quotes, tabs and non-ASCII text, years 1990.., and
// random 8-d vectors attached by id.
std::string make_corpus(const TempDir& tmp, std::size_t n) {
    std::string records;
    for (std::size_t i = 0; i < n; ++i) {
        nlohmann::json r{{"id", "p" + std::to_string(i)},
                         {"title", "Paper \"" + std::to_string(i) + "\"\t\u00e9t\u00e9 \\ " + std::to_string(i % 13)},
                         {"year", 1990 + i % 30}};
        records += r.dump() + "\n";
    }
    test::write_file(tmp.file("papers.jsonl"), records);
    ImportOptions options;
    options.sources.push_back({tmp.file("papers.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    import_corpus(options);
    std::string ids;
    for (std::size_t i = 0; i < n; ++i) ids += "p" + std::to_string(i) + "\n";
    test::write_file(tmp.file("ids.txt"), ids);
    const auto vectors = test::random_unit_rows(n, 8, 5);
    write_npy(tmp.file("v.npy"), DType::f32, n, 8, vectors.data());
    AddVectorsOptions add;
    add.vectors_path = tmp.file("v.npy");
    add.ids_path = tmp.file("ids.txt");
    add_vectors(tmp.file("c"), add);
    return tmp.file("c");
}

// The search line as the engine wrote it before the direct writer: nlohmann objects.
std::string nlohmann_search_line(const Corpus& corpus, const std::string& query_id, const TopK& top, std::size_t query,
                                 const std::string& cutoff, std::size_t searchable) {
    using ordered = nlohmann::ordered_json;
    ordered neighbors = ordered::array();
    for (std::size_t r = 0; r < top.count[query]; ++r) {
        const auto row = static_cast<std::size_t>(top.row(query, r));
        const auto [id, title] = corpus.id_and_title(row);
        neighbors.push_back({{"id", id}, {"row", row}, {"sim", top.sim(query, r)}, {"title", title}});
    }
    ordered line;
    line["query"] = query_id;
    line["neighbors"] = neighbors;
    line["cutoff"] = cutoff.empty() ? ordered(nullptr) : ordered(cutoff);
    line["searchable"] = searchable;
    return line.dump();
}

// The members of a stored (uncompressed) zip archive, by name.
std::map<std::string, std::string> read_zip(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto u16 = [&](std::size_t at) {
        return std::size_t(static_cast<unsigned char>(bytes[at])) | std::size_t(static_cast<unsigned char>(bytes[at + 1])) << 8;
    };
    auto u32 = [&](std::size_t at) { return u16(at) | u16(at + 2) << 16; };
    std::map<std::string, std::string> members;
    std::size_t at = 0;
    while (at + 30 <= bytes.size() && u32(at) == 0x04034b50) {
        EXPECT_EQ(u16(at + 8), 0u) << "stored, not compressed";
        const std::size_t size = u32(at + 18), name_len = u16(at + 26), extra_len = u16(at + 28);
        const std::string name = bytes.substr(at + 30, name_len);
        members[name] = bytes.substr(at + 30 + name_len + extra_len, size);
        at += 30 + name_len + extra_len + size;
    }
    EXPECT_EQ(u32(at), 0x02014b50u) << "the central directory follows the members";
    return members;
}

// The header dictionary and the data of a .npy member.
std::pair<std::string, std::string> split_npy(const std::string& npy) {
    EXPECT_EQ(npy.substr(0, 6), std::string("\x93NUMPY", 6));
    const std::size_t header_len = std::size_t(static_cast<unsigned char>(npy[8])) |
                                   std::size_t(static_cast<unsigned char>(npy[9])) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u) << "numpy aligns the data to 64 bytes";
    return {npy.substr(10, header_len), npy.substr(10 + header_len)};
}

std::string utf32_item(const std::string& data, std::size_t index, std::size_t width) {
    std::string out;
    for (std::size_t c = 0; c < width; ++c) {
        std::uint32_t cp = 0;
        std::memcpy(&cp, data.data() + (index * width + c) * 4, 4);
        if (cp == 0) break;
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }
    return out;
}

}  // namespace

TEST(JsonText, WritesTheBytesNlohmannWrites) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<double> values{0.0, -0.0, 1.0, 100.0, 1e-5, 1e21, 123456789.0, 0.1, 2.0 / 3.0};
    for (int i = 0; i < 20000; ++i) values.push_back(uniform(rng));
    for (int i = 0; i < 2000; ++i) values.push_back(std::ldexp(uniform(rng), i % 80 - 40));
    for (const double v : values) {
        std::string ours;
        json_text::append_number(ours, v);
        ASSERT_EQ(ours, nlohmann::json(v).dump()) << v;
    }
    std::string special;
    json_text::append_number(special, std::numeric_limits<double>::infinity());
    EXPECT_EQ(special, "null");
    for (const std::string text : {"", "plain", "quote \" and \\ backslash", "tab\tnew\nline\x01", "caf\xc3\xa9 \xe2\x82\xac",
                                   "del \x7f"}) {
        std::string ours;
        json_text::append_string(ours, text);
        EXPECT_EQ(ours, nlohmann::json(text).dump()) << text;
    }
    std::string bad;
    EXPECT_THROW(json_text::append_string(bad, "\xff\xfe"), std::exception);
    for (const std::size_t n : {std::size_t{0}, std::size_t{7}, std::numeric_limits<std::size_t>::max()}) {
        std::string ours;
        json_text::append_count(ours, n);
        EXPECT_EQ(ours, nlohmann::json(n).dump());
    }
}

TEST(SearchOutput, LabelsMatchOneLookupPerRow) {
    TempDir tmp;
    const Corpus corpus = Corpus::open(make_corpus(tmp, 300));
    std::mt19937 rng(9);
    std::vector<std::int64_t> rows{-1, 0, 299, 299, -1};
    for (int i = 0; i < 400; ++i) rows.push_back(static_cast<std::int64_t>(rng() % 300));
    const PaperLabels labels = corpus.labels(rows);
    EXPECT_TRUE(std::is_sorted(labels.rows.begin(), labels.rows.end()));
    EXPECT_EQ(labels.rows.front(), 0);
    ASSERT_EQ(labels.index_of_input.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::int64_t row = rows[i];
        if (row < 0) {
            EXPECT_EQ(labels.index_of_input[i], PaperLabels::no_row) << i;
            continue;
        }
        const auto [id, title] = corpus.id_and_title(static_cast<std::size_t>(row));
        const std::size_t at = labels.index_of_input[i];
        ASSERT_LT(at, labels.rows.size()) << i;
        EXPECT_EQ(labels.rows[at], row) << i;
        EXPECT_EQ(labels.ids[at], id);
        EXPECT_EQ(labels.titles[at], title);
    }
    EXPECT_TRUE(corpus.labels(rows, false).titles.empty());
    EXPECT_TRUE(corpus.labels({-1, -1}).rows.empty());
    EXPECT_THROW(corpus.labels({3, 300}), UsageError);
}

TEST(SearchOutput, DirectLinesAreTheNlohmannBytes) {
    TempDir tmp;
    const Corpus corpus = Corpus::open(make_corpus(tmp, 200));
    const auto queries = test::random_unit_rows(37, 8, 11);
    SearchQueries q{queries.data(), 37, 8};
    for (std::size_t i = 0; i < 37; ++i) q.scope.row_limit.push_back(i % 5 == 0 ? 3 : 200);  // some with few rows
    const TopK top = make_cpu_backend()->build(VectorView::of(corpus.vectors()))->search(q, 10);
    const PaperLabels labels = corpus.labels(top.rows);
    const std::string text = format_lines(37, [&](std::size_t i, std::string& line) {
        append_search_result_json(line, labels, "q" + std::to_string(i), top, i, i % 2 ? "2001" : "", q.scope.row_limit[i]);
    });
    std::istringstream lines(text);
    std::string line;
    for (std::size_t i = 0; i < 37; ++i) {
        ASSERT_TRUE(std::getline(lines, line));
        EXPECT_EQ(line, nlohmann_search_line(corpus, "q" + std::to_string(i), top, i, i % 2 ? "2001" : "", q.scope.row_limit[i]));
        EXPECT_EQ(line, search_result_json(corpus, "q" + std::to_string(i), top, i, i % 2 ? "2001" : "", q.scope.row_limit[i]));
    }
    EXPECT_FALSE(std::getline(lines, line));
    EXPECT_EQ(format_lines(0, [](std::size_t, std::string&) {}), "");
    // Labels looked up for other rows than the result's are refused, not read at wrong positions.
    std::string refused;
    EXPECT_THROW(append_search_result_json(refused, corpus.labels({0, 1}), "q", top, 0, "", 200), UsageError);
}

TEST(SearchOutput, NpzHoldsTheJsonLinesResults) {
    TempDir tmp;
    const std::string dir = make_corpus(tmp, 120);
    test::write_file(tmp.file("q.jsonl"), "{\"id\": \"p5\"}\n{\"id\": \"p7\", \"date\": \"1992\"}\n"
                                          "{\"id\": \"id \\u00e9\", \"text\": \"x\"}\n");
    const auto vectors = test::random_unit_rows(3, 8, 21);
    write_npy(tmp.file("qv.npy"), DType::f32, 3, 8, vectors.data());
    const std::string common = "search -q --corpus " + shell_quote(dir) + " --queries " + shell_quote(tmp.file("q.jsonl")) +
                               " --vectors " + shell_quote(tmp.file("qv.npy")) + " --k 6 --out ";
    ASSERT_EQ(run_cli(common + shell_quote(tmp.file("hits.jsonl"))).exit_code, 0);
    const auto r = run_cli(common + shell_quote(tmp.file("hits.npz")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = test::json_lines(tmp.file("hits.jsonl"));
    auto members = read_zip(tmp.file("hits.npz"));
    ASSERT_EQ(members.size(), 6u);
    const auto [sims_header, sims] = split_npy(members["sims.npy"]);
    EXPECT_NE(sims_header.find("'descr': '<f4', 'fortran_order': False, 'shape': (3, 6), }"), std::string::npos);
    const auto [rows_header, rows] = split_npy(members["rows.npy"]);
    EXPECT_NE(rows_header.find("'<i8'"), std::string::npos);
    const auto [counts_header, counts] = split_npy(members["counts.npy"]);
    EXPECT_NE(counts_header.find("'shape': (3,)"), std::string::npos);
    const auto [ids_header, ids] = split_npy(members["ids.npy"]);
    const auto [queries_header, query_ids] = split_npy(members["queries.npy"]);
    EXPECT_NE(queries_header.find("'<U4'"), std::string::npos) << queries_header;  // "id é"
    const std::size_t width = std::stoul(ids_header.substr(ids_header.find("'<U") + 3));
    ASSERT_EQ(sims.size(), 3u * 6 * 4);
    ASSERT_EQ(rows.size(), 3u * 6 * 8);
    ASSERT_EQ(ids.size(), 3u * 6 * 4 * width);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(utf32_item(query_ids, i, 4), lines[i]["query"].get<std::string>());
        std::int64_t count = 0;
        std::memcpy(&count, counts.data() + i * 8, 8);
        ASSERT_EQ(static_cast<std::size_t>(count), lines[i]["neighbors"].size());
        for (std::size_t r = 0; r < 6; ++r) {
            float sim = 0;
            std::int64_t row = 0;
            std::memcpy(&sim, sims.data() + (i * 6 + r) * 4, 4);
            std::memcpy(&row, rows.data() + (i * 6 + r) * 8, 8);
            if (r < static_cast<std::size_t>(count)) {
                const auto& n = lines[i]["neighbors"][r];
                EXPECT_EQ(sim, n["sim"].get<float>());
                EXPECT_EQ(row, n["row"].get<std::int64_t>());
                EXPECT_EQ(utf32_item(ids, i * 6 + r, width), n["id"].get<std::string>());
            } else {
                EXPECT_EQ(row, -1);
                EXPECT_TRUE(std::isinf(sim) && sim < 0);
                EXPECT_EQ(utf32_item(ids, i * 6 + r, width), "");
            }
        }
    }
}

TEST(SearchOutput, NpzWriterRefusesShortArraysAndLeavesNoFile) {
    TempDir tmp;
    {
        NpzWriter npz(tmp.file("a.npz"));
        npz.begin_array("x", "<f4", {2, 3}, 4);
        const float six[6] = {1, 2, 3, 4, 5, 6};
        npz.write(six, 5 * sizeof(float));
        EXPECT_THROW(npz.commit(), Error);
    }
    EXPECT_FALSE(std::ifstream(tmp.file("a.npz")).good());
    std::vector<char> item;
    EXPECT_THROW(append_utf32_item(item, "abc", 2), UsageError);
    append_utf32_item(item, "\xc3\xa9", 2);
    EXPECT_EQ(item.size(), 8u);
    EXPECT_EQ(static_cast<unsigned char>(item[0]), 0xe9);
    EXPECT_EQ(utf8_length("\xc3\xa9t\xc3\xa9"), 3u);
}
