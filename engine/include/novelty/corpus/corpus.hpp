// A corpus directory (docs/formats.md): manifest.json, papers.sqlite, vectors.npy, caches.
#pragma once

#include "novelty/util/checksum.hpp"
#include "novelty/util/dates.hpp"
#include "novelty/corpus/import.hpp"
#include "novelty/io/npy.hpp"
#include "novelty/corpus/paper.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace novelty {

/// The format version written to manifest.json; readers refuse newer versions.
inline constexpr int corpus_format_version = 2;

/// How rows are ordered, as recorded in the manifest.
inline constexpr const char* corpus_row_order =
    "effective date ascending (a partial date counts as the last day of its period), undated papers last, "
    "ties by id (byte order)";

struct EmbedderInfo {
    std::string name;     ///< e.g. "all-MiniLM-L6-v2" or "external"
    std::size_t dim = 0;
    std::string pooling;  ///< "mean", "cls", or "" when unknown
    std::string device;   ///< where the built-in encoder ran: "cpu", "cuda", or "" when not known
    /// The precision of the encoder's weight products: "f32", "bf16" or "int8" for one run of the
    /// built-in encoder, "mixed" once rows of two precisions share the file (a `corpus add` at
    /// another precision), "" when not known (external vectors, or a corpus written before this).
    std::string precision;
};

struct SourceInfo {
    std::string path;     ///< as given on the command line
    std::string format;   ///< import format name
    std::string field;    ///< field given to its records, "" when from the records
    std::string sha256;
    std::size_t records = 0;  ///< records imported from it
    std::size_t skipped = 0;  ///< records skipped (only with skip_invalid)
    std::size_t duplicates = 0;  ///< identical copies of earlier records, dropped
};

struct NameCount {
    std::string name;
    std::size_t count = 0;
};

/// What one `corpus add` changed.
struct CorpusUpdate {
    std::string at;          ///< UTC time, ISO 8601
    std::size_t added = 0;   ///< new rows
    std::size_t removed = 0; ///< old rows deleted or replaced
    /// Rows from here on were renumbered (their papers moved); -1 when none moved.
    std::int64_t first_renumbered_row = -1;
    std::size_t caches_updated = 0;
};

/// Everything manifest.json records.
struct CorpusManifest {
    int format_version = corpus_format_version;
    std::size_t count = 0;         ///< papers = rows
    std::size_t dim = 0;           ///< 0 until vectors are attached
    std::string dtype;             ///< "f32" | "f16" | "" (no vectors)
    std::optional<EmbedderInfo> embedder;
    std::string row_order = corpus_row_order;
    std::vector<SourceInfo> sources;
    std::string papers_sha256;
    std::string vectors_sha256;    ///< "" without vectors
    /// Size and sampled checksum of each file, checked on every open (empty bytes and hash in
    /// corpora written before they were recorded: then only shapes are checked).
    FileFingerprint papers_fingerprint;
    FileFingerprint vectors_fingerprint;
    /// The generation token papers.sqlite records (its corpus_generation table), written by each
    /// `corpus add`; "" for a corpus no add has changed. Checked on every open.
    std::string papers_generation;
    /// True when papers.sqlite records each paper's place among the imported records
    /// (column input_row), so that add-vectors can attach vectors given in input order.
    bool input_order_recorded = false;
    std::string created;           ///< UTC time of the import, ISO 8601
    std::string date_min, date_max;  ///< as stored ("YYYY[-MM[-DD]]"), "" when no paper is dated
    std::size_t n_dated = 0;         ///< rows [0, n_dated) have dates; the rest are undated
    std::size_t n_with_citations = 0;
    std::vector<NameCount> fields;   ///< every field, by count descending then name
    std::vector<NameCount> venues;   ///< the 50 most common venues
    std::size_t n_venues = 0;        ///< distinct venues
    std::size_t n_skipped = 0;
    std::size_t n_duplicates = 0;    ///< identical duplicate records dropped
    std::vector<SkippedRecord> skipped;  ///< the first 100 skipped records
    /// Papers given without a vector (s2 imports with embeddings files): they are not rows, so
    /// no search sees them; papers.sqlite keeps them in its `unembedded` table.
    std::size_t n_unembedded = 0;
    std::vector<std::string> unembedded;  ///< the first 100 of their ids
    std::size_t n_revised = 0;   ///< records replaced by a later file's version (pubmed)
    std::size_t n_deleted = 0;   ///< records removed by a later file's deletion (pubmed)
    /// One entry per `corpus add`, oldest first.
    std::vector<CorpusUpdate> updates;
};

/// Reads DIR/manifest.json; throws CorpusError when it is missing or invalid. A DIR left missing
/// by an interrupted import --overwrite is recovered first.
CorpusManifest read_manifest(const std::string& dir);
/// Writes DIR/manifest.json atomically (temporary file, then rename).
void write_manifest(const std::string& dir, const CorpusManifest& manifest);

/// The ids and titles of a set of corpus rows, looked up together (Corpus::labels).
struct PaperLabels {
    static constexpr std::uint32_t no_row = 0xffffffffu;
    std::vector<std::int64_t> rows;  ///< distinct, ascending
    std::vector<std::string> ids;    ///< ids[i] is the id of rows[i]
    std::vector<std::string> titles; ///< empty when titles were not asked for
    /// One entry per row given to Corpus::labels, in the order given: the index of that row in
    /// `rows` (no_row for a negative row). Lets a caller that holds the looked-up row list (a
    /// TopK's rows) find each label in O(1), without a search per neighbour.
    std::vector<std::uint32_t> index_of_input;
};

/// The form aliases are stored and looked up in: surrounding blanks removed, ASCII letters in
/// lower case, and a leading "https://doi.org/", "http://dx.doi.org/" or "https://arxiv.org/abs/"
/// turned into "doi:" / "arxiv:" (so a DOI URL finds the paper its DOI names).
std::string normalize_alias(const std::string& name);

/// An open, read-only corpus.
class Corpus {
public:
    /// Opens DIR. Throws CorpusError when DIR is not a complete corpus: no manifest (an import
    /// that did not finish), a manifest from a newer version, papers.sqlite or vectors.npy whose
    /// size or sampled checksum (FileFingerprint) differ from the manifest, a papers table whose
    /// row count differs from it, or vectors.npy whose header, shape or dtype differ from it.
    /// These checks are cheap (about 1 MiB read per file); `corpus info --verify` is the deep one.
    /// When DIR is missing because an import --overwrite was killed between its renames, the
    /// corpus is first recovered (recover_interrupted_import, with a notice).
    /// What open() checks and maps: everything, or the papers alone (for commands that replace
    /// the vectors, such as `corpus embed`, which must work on a corpus whose vectors.npy an
    /// interrupted run left unlike the manifest).
    enum class Part { all, papers };
    static Corpus open(const std::string& dir, Part part = Part::all);

    Corpus(Corpus&&) noexcept;
    Corpus& operator=(Corpus&&) noexcept;
    ~Corpus();

    const std::string& dir() const;
    const CorpusManifest& manifest() const;
    std::size_t size() const;
    bool has_vectors() const;
    /// The normalised vectors, size() x dim, memory-mapped. Throws CorpusError without vectors.
    const NpyMatrix& vectors() const;

    /// The paper at `row` (< size()).
    Paper paper(std::size_t row) const;
    /// Id and title of the paper at `row` (< size()); cheaper than paper().
    std::pair<std::string, std::string> id_and_title(std::size_t row) const;
    /// Ids (and titles, unless `with_titles` is false) of the given rows, in any order, repeats
    /// and negative rows (empty result slots) allowed and ignored. One pass over the papers
    /// table in row order: a batch of results costs one step per distinct row, not a lookup
    /// per neighbour. Throws UsageError for a row >= size().
    PaperLabels labels(const std::vector<std::int64_t>& rows, bool with_titles = true) const;
    /// Row of the paper with this id, if any; otherwise the row of the paper that has it as an
    /// alias (a DOI, "doi:DOI", "arxiv:ID", "pmid:N", ...: Paper::aliases), compared after
    /// normalize_alias.
    std::optional<std::size_t> find_row(const std::string& id) const;
    /// Number of rows published on or before `cutoff` (compared by effective date). Because rows
    /// are in date order with undated papers last, these are exactly rows [0, result).
    std::size_t rows_through(const PartialDate& cutoff) const;
    /// Calls `visit` with every paper's row, field, venue and citation count ("" / nullopt when
    /// unknown), in row order, in one pass over the papers table.
    void scan_metadata(const std::function<void(std::size_t row, const std::string& field, const std::string& venue,
                                                const std::optional<std::int64_t>& citations)>& visit) const;
    /// The corpus identity for provenance: SHA-256 over the papers and vectors checksums.
    std::string identity() const;

private:
    struct Impl;
    explicit Corpus(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// How add_vectors maps vector rows to papers when no ids file is given.
enum class VectorOrder {
    /// Row i belongs to the i-th record the import accepted (the order `novelty embed` writes
    /// for the same input file). Refused, with a message that says to pass ids, when the corpus
    /// cannot tell: an older corpus without the recorded order, or one imported from several
    /// files or with skipped or dropped records, unless its input order is its row order.
    input,
    /// Row i belongs to corpus row i (date order, as `corpus embed` writes).
    corpus,
};

/// Options of add_vectors.
struct AddVectorsOptions {
    std::string vectors_path;  ///< N x D .npy, float32 or float16
    /// Optional: one paper id per line (or a .jsonl file with an "id" per line), naming the
    /// paper of each vector row. Without it, `order` decides.
    std::string ids_path;
    VectorOrder order = VectorOrder::input;
    /// Storage type; empty keeps the input's.
    std::optional<DType> dtype;
    EmbedderInfo embedder;     ///< name and pooling to record (dim is taken from the file)
    std::function<void(std::size_t rows_done, std::size_t rows_total)> on_progress;
};

/// Attaches vectors to the corpus in DIR: checks the count (and ids), L2-normalises every row,
/// rejects NaN, Inf and zero rows naming their paper ids (InputError; nothing is changed), writes
/// vectors.npy in corpus row order, updates the manifest and removes caches computed from the
/// previous vectors.
void add_vectors(const std::string& dir, const AddVectorsOptions& options);

}  // namespace novelty
