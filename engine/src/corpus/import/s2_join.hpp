// The abstracts and SPECTER2 vectors of a Semantic Scholar import, staged beside the papers
// (in the staging database) and joined to them by corpusid once every file is read.
#pragma once

#include "corpus/citations/s2_citations.hpp"
#include "corpus/import/record_fields.hpp"
#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/io/npy.hpp"

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
    /// Creates the staging tables (staging.s2_abstracts, staging.s2_vectors). `base_dir`: the
    /// corpus a `corpus add` adds to ("" for an import), whose vectors.npy the vectors given
    /// for its papers are compared with.
    S2Join(SqliteDb& db, const std::vector<ImportSource>& sources, const std::string& base_dir = "");

    /// Stages an abstracts, embeddings or citations record (citations: S2CitationStager). Returns false when it is an identical copy of
    /// one already staged (dropped); throws InputError for a repeated corpusid with other
    /// content (naming the first), a bad vector, or a vector whose model or length differ from
    /// the first vector's.
    bool stage(S2Kind kind, const nlohmann::json& record, std::size_t file_index, std::size_t line);

    /// After every file is read: vectors must name a staged paper (abstracts of other papers
    /// are counted and passed over); abstracts fill their papers; every paper must then have a title or an abstract; when any vector
    /// was given, papers without one leave the staging table for papers.unembedded (not rows).
    /// Problems go to `skip` with the file and line of the record at fault.
    ///
    /// In a `corpus add` (papers of the corpus staged, or the corpus in the main schema), for the
    /// corpus's own papers: a vector given without a papers record (or with an identical one)
    /// replaces the paper's vector (the paper is staged again from its record, as a revision);
    /// a revised papers record of an s2 file with no abstracts line keeps the paper's abstract,
    /// and with no vector keeps its vector (it is not left unembedded); a papers record that is
    /// then identical to the corpus's, with no vector or the stored one, is dropped (listed in
    /// identical_dropped(), not counted as revised).
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
    /// The row in the base corpus of a paper of it that this add revised (staging.base_revised).
    std::optional<std::size_t> revised_base_row(const std::string& corpusid);
    /// Papers of the base corpus that got a new vector alone (no new papers record).
    std::size_t n_vectors_replaced() const { return n_vectors_replaced_; }
    /// Records identical to the base corpus's paper after the join, dropped (file, line, note).
    const std::vector<SkippedRecord>& identical_dropped() const { return identical_; }
    /// How many of those were papers records that the reading had counted as revisions.
    std::size_t n_identical_revisions() const { return n_identical_revisions_; }
    const std::string& model() const { return model_; }
    /// Citations lines passed over because they name no cited paper.
    std::size_t n_citations_without_cited() const { return citations_.n_without_cited(); }
    std::size_t dim() const { return dim_; }

private:
    void check_unmatched(const char* table, const char* what, const SkipFn& skip);
    /// Vectors for base papers that no staged record lists: the paper staged again (a revision).
    void revive_vector_only_papers();
    /// Revised base papers of s2 files without an abstracts line keep their abstract.
    void keep_base_abstracts();
    /// Drops revisions identical to the base paper (record, and the vector when one is given).
    void drop_identical_revisions();
    /// True when `blob` (a staged vector) normalised is the base corpus's row `row`.
    bool same_as_base_vector(const void* blob, std::size_t n_bytes, std::size_t row);
    bool incremental() { return has_table(db_, "removed", "staging"); }

    SqliteDb& db_;
    const std::vector<ImportSource>& sources_;
    SqliteStatement insert_abstract_, insert_vector_, earlier_abstract_, earlier_vector_;
    citations_detail::S2CitationStager citations_;
    S2Vector vector_;
    std::optional<SqliteStatement> vector_by_id_;
    std::string model_;
    std::size_t dim_ = 0;
    std::string first_vector_at_;
    std::size_t n_unembedded_ = 0;
    std::size_t n_unmatched_abstracts_ = 0;
    std::vector<std::string> unembedded_first_;
    std::string base_dir_;
    std::optional<NpyMatrix> base_vectors_;  ///< opened when first needed
    std::optional<SqliteStatement> revised_row_;
    std::size_t n_vectors_replaced_ = 0, n_identical_revisions_ = 0;
    std::vector<SkippedRecord> identical_;
};

}  // namespace novelty::import_detail
