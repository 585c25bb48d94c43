// A small corpus with given vectors for the scoring tests: paper i is "p<i>", published in year
// 2000 + i % 20, with i % 7 citations (rows are ordered by date, so rows differ from i).
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/io/npy.hpp"
#include "test_util.hpp"

#include <string>
#include <vector>

namespace novelty::test {

/// `fields`, when given, holds each paper's field.
inline std::string make_scoring_corpus(const TempDir& tmp, const std::vector<float>& vectors, std::size_t dim,
                                       const std::vector<std::string>& fields = {}) {
    const std::size_t n = vectors.size() / dim;
    std::string records, ids;
    for (std::size_t i = 0; i < n; ++i) {
        records += "{\"id\": \"p" + std::to_string(i) + "\", \"title\": \"t\", \"year\": " + std::to_string(2000 + i % 20) +
                   (fields.empty() ? "" : ", \"field\": \"" + fields[i] + "\"") + ", \"citations\": " +
                   std::to_string(i % 7) + "}\n";
        ids += "p" + std::to_string(i) + "\n";
    }
    write_file(tmp.file("in.jsonl"), records);
    ImportOptions options;
    options.sources.push_back({tmp.file("in.jsonl"), ImportFormat::jsonl, ""});
    options.out_dir = tmp.file("c");
    import_corpus(options);
    write_file(tmp.file("ids.txt"), ids);
    write_npy(tmp.file("v.npy"), DType::f32, n, dim, vectors.data());
    AddVectorsOptions add;
    add.vectors_path = tmp.file("v.npy");
    add.ids_path = tmp.file("ids.txt");
    add_vectors(tmp.file("c"), add);
    return tmp.file("c");
}

}  // namespace novelty::test
