// The abstracts and SPECTER2 vectors of a Semantic Scholar import, staged beside the papers
// (in the staging database) and joined to them by corpusid once every file is read.
#pragma once

#include "corpus/import/record_fields.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace novelty::import_detail {

/// How many ids of papers left unembedded the manifest lists (the first, by id).
inline constexpr std::size_t max_listed_unembedded = 100;

/// Reports a record problem for the source file `file_index`: throws, or records a skip.
using SkipFn = std::function<void(std::size_t file_index, const InputError& error)>;

class S2Join {
public:
    /// Creates the staging tables (staging.s2_abstracts, staging.s2_vectors).
    S2Join(SqliteDb& db, const std::vector<ImportSource>& sources);

    /// Stages an abstracts or embeddings record. Returns false when it is an identical copy of
    /// one already staged (dropped); throws InputError for a repeated corpusid with other
    /// content (naming the first), a bad vector, or a vector whose model or length differ from
    /// the first vector's.
    bool stage(S2Kind kind, const nlohmann::json& record, std::size_t file_index, std::size_t line);

    /// After every file is read: vectors must name a staged paper (abstracts of other papers
    /// are counted and passed over); abstracts fill their papers; every paper must then have a title or an abstract; when any vector
    /// was given, papers without one leave the staging table for papers.unembedded (not rows).
    /// Problems go to `skip` with the file and line of the record at fault.
    void join(const SkipFn& skip);

    bool has_vectors() const { return dim_ > 0; }
    std::size_t n_unembedded() const { return n_unembedded_; }
    std::size_t n_unmatched_abstracts() const { return n_unmatched_abstracts_; }
    const std::vector<std::string>& unembedded_first() const { return unembedded_first_; }

    /// After the papers table is ordered: writes `vectors_path` (.npy, float32, normalised) in
    /// row order and records dim, dtype, embedder and checksums in `manifest`. A zero vector is
    /// an InputError naming its file and line.
    void write_vectors(const std::string& vectors_path, CorpusManifest& manifest);

    /// The staged vector of `corpusid` (not normalised) into `out`; false when none was given.
    bool vector_of(const std::string& corpusid, std::vector<float>& out);
    const std::string& model() const { return model_; }
    std::size_t dim() const { return dim_; }

private:
    void check_unmatched(const char* table, const char* what, const SkipFn& skip);

    SqliteDb& db_;
    const std::vector<ImportSource>& sources_;
    SqliteStatement insert_abstract_, insert_vector_, earlier_abstract_, earlier_vector_;
    S2Vector vector_;
    std::optional<SqliteStatement> vector_by_id_;
    std::string model_;
    std::size_t dim_ = 0;
    std::string first_vector_at_;
    std::size_t n_unembedded_ = 0;
    std::size_t n_unmatched_abstracts_ = 0;
    std::vector<std::string> unembedded_first_;
};

}  // namespace novelty::import_detail
