// The one place a record becomes a query. Records come from a JSON Lines or .npy file (the CLI),
// a request body (the server) or Python dicts and arrays; the resolver gives each its scope
// (cutoff, exclusions, own paper: ScopeResolver), its metadata filter (the run's with its own,
// through a RowFilterCache) and its vector (given, its text embedded, or the corpus paper its id
// names), and the resolved batch yields search queries, score input and reach problems.
//
//   RecordBatch batch = read_record_file(path, vectors_path, corpus.manifest().dim);
//   RequestResolver resolver(corpus, options);
//   ResolvedBatch resolved = resolver.resolve(std::move(batch));
//   embed_pending(resolved, embed);            // the records whose vector is their text
//   index.search(resolved.queries(), k);
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper_filter.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/search.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// Where records came from, so that a record's problem names it as its source does: a file
/// (InputError naming the file and the record's line) or a request (UsageError naming
/// "key[i]", which the server reports as the parameter at fault and Python as a ValueError).
struct RecordOrigin {
    std::string file;             ///< non-empty: the records of this file
    std::string key = "records";  ///< else: their name in the request ("ideas", "queries")
    /// Appended to the refusal of a record with nothing to search by (what else it may send).
    std::string hint;

    /// Throws the error for record `i` (line `line` of the file) with `problem`; `field` ("id",
    /// "vector", ... or "") refines a request's parameter.
    [[noreturn]] void fail(std::size_t i, std::size_t line, const std::string& problem, const std::string& field = "") const;
};

/// Records as read, before resolution, with the vectors some of them were given.
struct RecordBatch {
    std::vector<QueryRecord> records;
    std::size_t dim = 0;             ///< the given vectors' dimension; 0 when none is given
    std::vector<float> given;        ///< n x dim: row i is record i's own vector when has_vector[i]
    std::vector<std::uint8_t> has_vector;  ///< per record; empty when no record has a vector
    /// false: the ids are made up (rows of a .npy file or an array: "0", "1", ...) and never name
    /// the record's own paper.
    bool own_papers = true;
    RecordOrigin origin;

    std::size_t size() const { return records.size(); }
    bool given_vector(std::size_t i) const { return !has_vector.empty() && has_vector[i] != 0; }
};

/// Reads a query file as the CLI takes it: a .npy matrix (one record per row, ids "0".."n-1",
/// no own papers) or JSON Lines (read_query_records), with `vectors_path` (optional) a .npy
/// matrix parallel to the JSON Lines records giving each its vector. `dim` (0: any) is the
/// dimension the vectors must have, `dim_owner` what it comes from, for messages. Throws
/// InputError naming the file and line (or row) for NaN/Inf or zero vectors, a dimension or
/// row-count mismatch, an empty file.
RecordBatch read_record_file(const std::string& path, const std::string& vectors_path = "", std::size_t dim = 0,
                             const std::string& dim_owner = "the corpus");

/// Records `ids` with their own dates and exclusions (each list empty or one entry per id) and
/// the vectors of an n x dim matrix (null: none), as Python's arrays and lists give them.
RecordBatch record_batch(const std::vector<std::string>& ids, const std::vector<std::optional<PartialDate>>& dates,
                         const std::vector<std::vector<std::string>>& excludes, const float* vectors, std::size_t dim,
                         bool own_papers, RecordOrigin origin);

/// What every record of a run shares.
struct ResolveOptions {
    std::optional<PartialDate> cutoff;  ///< for records without their own date
    std::vector<std::string> exclude;   ///< ids left out for every record
    PaperFilter filter;                 ///< the run's metadata filter, applied with each record's own
    bool vectors = true;  ///< each record needs a vector (searching, scoring, dense retrieval)
    bool texts = false;   ///< each record needs a text (BM25): its own, else its corpus paper's
};

/// Records resolved against a corpus, in input order.
struct ResolvedBatch {
    std::vector<QueryRecord> records;
    std::size_t dim = 0;         ///< the corpus's
    std::vector<float> vectors;  ///< n x dim float32 (as given or embedded, not normalised); empty without vectors
    /// Per record: row limit (cutoff), the cutoff's text, the rows and ids it leaves out (its own
    /// paper included), the excluded ids that are not in the corpus.
    std::vector<RecordScope> scopes;
    /// Per record its filter (the run's with its own; null for none); empty when no record has one.
    std::vector<std::shared_ptr<const RowFilter>> filters;
    /// Per record with ResolveOptions::texts: its embedding text, else its corpus paper's title
    /// and abstract; empty otherwise.
    std::vector<std::string> texts;
    std::vector<std::size_t> to_embed;  ///< records whose vector is still to be embedded from their text
    /// The precision of the built-in encoder that embedded records' texts (EmbedSettings::precision);
    /// "" when none was embedded here or the encoder has none (an embedding server).
    std::string embedded_precision;
    RecordOrigin origin;

    std::size_t size() const { return records.size(); }
    /// Appends the records of `other` (resolved against the same corpus, with vectors when this
    /// batch has them), as the server joins requests into one search.
    void append(const ResolvedBatch& other);
    /// Records [begin, end) as search queries (views into this batch: it must outlive them).
    SearchQueries queries(std::size_t begin, std::size_t end) const;
    SearchQueries queries() const { return queries(0, size()); }
    /// The records `which` (indexes, in that order) as one scorer batch; `vectors` receives their
    /// rows and must outlive the batch.
    ScoreInput score_input(const std::vector<std::size_t>& which, std::vector<float>& vectors) const;
    /// Per record, why it cannot be scored with p and q among `corpus_rows` papers ("" when it can).
    std::vector<std::string> reach_problems(std::size_t corpus_rows, std::size_t p, std::size_t q) const;
    /// Throws, through the origin, the first reach problem followed by `advice` ("" for none).
    void check_reach(std::size_t corpus_rows, std::size_t p, std::size_t q, const std::string& advice = "") const;
};

/// Resolves record batches against one corpus. Not thread-safe; the corpus and a given filter
/// cache must outlive it. Cheap to make per request.
class RequestResolver {
public:
    /// `filters` (optional) keeps masks between resolvers (the server's); else one of its own.
    RequestResolver(const Corpus& corpus, ResolveOptions options, RowFilterCache* filters = nullptr);

    /// The batch's scopes, filters, texts and vectors: a given vector, else (with text) a row of
    /// to_embed, else the vector of the corpus paper its id names. A record with neither text,
    /// vector nor corpus paper (when a vector or a text is needed) is refused through its origin,
    /// before any embedding. Throws CorpusError for a corpus without vectors when vectors are needed.
    ResolvedBatch resolve(RecordBatch batch);

private:
    const Corpus& corpus_;
    ResolveOptions options_;
    std::unique_ptr<RowFilterCache> own_filters_;
    RowFilterCache* filters_;
};

/// Embeds `texts`: texts.size() x dim float32 values, row-major.
using EmbedTexts = std::function<std::vector<float>(const std::vector<std::string>& texts)>;

/// How records' texts are embedded: the encoder's name (for messages), `chunk` texts per call
/// (the CLI and Python embed 64 at a time, so that the same texts give the same bits), and
/// progress(done, total) over the records.
struct EmbedSettings {
    std::string encoder;
    std::size_t chunk = 64;
    std::function<void(std::size_t done, std::size_t total)> progress;
    std::string precision;  ///< the encoder's precision (Embedder::precision), "" when it has none
};

/// Embeds the texts of records `which` into rows of `vectors` (records.size() x dim), in order;
/// with dim 0 the first call sets it (and sizes `vectors`). Throws UsageError when the encoder's
/// dimension differs from `dim` (`dim_owner` says where dim comes from).
void embed_records(const std::vector<QueryRecord>& records, const std::vector<std::size_t>& which, const EmbedTexts& embed,
                   const EmbedSettings& settings, std::vector<float>& vectors, std::size_t& dim,
                   const std::string& dim_owner = "the corpus");

/// embed_records for the records of batch.to_embed, which it then clears; records
/// settings.precision as batch.embedded_precision when it embedded any.
void embed_pending(ResolvedBatch& batch, const EmbedTexts& embed, const EmbedSettings& settings);

}  // namespace novelty
