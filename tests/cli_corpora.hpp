// Small corpora the CLI tests build through the CLI itself (corpus import + add-vectors), shared
// by the test files that need the same one.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "novelty/io/npy.hpp"
#include "search_reference.hpp"
#include "test_util.hpp"

namespace novelty::test {

/// Papers a, b, c (years 2001-2003) with the 4-d vectors e0, e1, e2 and no encoder, in
/// tmp/c; the records in tmp/p.jsonl.
inline std::string three_paper_corpus(const TempDir& tmp) {
    write_file(tmp.file("p.jsonl"), "{\"id\": \"a\", \"title\": \"A\", \"year\": 2001}\n"
                                    "{\"id\": \"b\", \"title\": \"B\", \"year\": 2002}\n"
                                    "{\"id\": \"c\", \"title\": \"C\", \"year\": 2003}\n");
    const std::string dir = tmp.file("c");
    auto r = run_cli("corpus import -q --in " + shell_quote(tmp.file("p.jsonl")) + " --out " + shell_quote(dir));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const float rows[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    write_npy(tmp.file("v.npy"), DType::f32, 3, 4, rows);
    r = run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("v.npy")));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
}

/// n generic papers p0..p(n-1) in date order (2000 on) with random unit dim-d vectors (seed 21),
/// in tmp/random. With `twins`, every 9th row is repeated 7 rows later (exact ties, which on
/// sharded runs fall on other ranks).
inline std::string random_corpus(const TempDir& tmp, std::size_t n, std::size_t dim, bool twins) {
    std::string records;
    for (std::size_t i = 0; i < n; ++i)
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"paper " + std::to_string(i) + " on topic " +
                   std::to_string(i % 13) + "\", \"date\": \"" + std::to_string(2000 + i * 20 / n) + "-0" +
                   std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10) + "\"}\n";
    write_file(tmp.file("papers.jsonl"), records);
    auto rows = random_unit_rows(n, dim, 21);
    if (twins)
        for (std::size_t i = 0; i + 7 < n; i += 9) std::copy_n(rows.begin() + i * dim, dim, rows.begin() + (i + 7) * dim);
    write_npy(tmp.file("vectors.npy"), DType::f32, n, dim, rows.data());
    const std::string dir = tmp.file("random");
    EXPECT_EQ(run_cli("corpus import -q --in " + shell_quote(tmp.file("papers.jsonl")) + " --out " + shell_quote(dir)).exit_code, 0);
    EXPECT_EQ(run_cli("corpus add-vectors -q " + shell_quote(dir) + " --vectors " + shell_quote(tmp.file("vectors.npy"))).exit_code,
              0);
    return dir;
}

}  // namespace novelty::test
