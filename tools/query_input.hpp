// Turning a query file into searchable queries: vectors (from a .npy, a parallel --vectors
// file, or the corpus itself for records naming a corpus paper), per-query row limits from
// cutoffs, and per-query excluded rows. Shared by the commands that search.
#pragma once

#include "embedder_choice.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper_filter.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty/io/query_records.hpp"
#include "novelty/request/scope.hpp"
#include "novelty/scoring/scoring.hpp"
#include "novelty/search/search.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace novelty::cli {

struct QueryInputOptions {
    std::string queries_path;           ///< .jsonl or .npy
    std::string vectors_path;           ///< optional .npy parallel to a .jsonl
    std::optional<PartialDate> cutoff;  ///< for records without their own date
    std::vector<std::string> exclude;   ///< paper ids left out for every query
    /// Makes the embedder for records with text and no given vector; called at most once, only
    /// when such records exist. Empty: such records are an error.
    std::function<std::unique_ptr<Embedder>()> make_embedder;
    std::function<void(std::size_t done, std::size_t total)> on_embed_progress;
};

/// Reading ideas and their vectors without a corpus (novelty dedup, and load_query_input).
struct IdeaVectorsOptions {
    std::string path;          ///< .jsonl or .npy
    std::string vectors_path;  ///< optional .npy parallel to a .jsonl
    /// The dimension the vectors must have; 0 = whatever the files or the encoder give.
    std::size_t dim = 0;
    std::string dim_owner = "the corpus";  ///< what `dim` comes from, for messages
    /// Makes the embedder for records with text and no given vector (as in QueryInputOptions).
    std::function<std::unique_ptr<Embedder>()> make_embedder;
    std::function<void(std::size_t done, std::size_t total)> on_embed_progress;
    /// Fills the vector (dim values) of a .jsonl record with no text and no --vectors file, or
    /// throws InputError. Empty: such a record is an InputError.
    std::function<void(const QueryRecord&, float*)> textless;
};

struct IdeaVectors {
    std::vector<QueryRecord> records;  ///< in input order (ids "0".."n-1" for .npy)
    std::vector<float> vectors;        ///< n x dim float32, as given or embedded (not normalised)
    std::size_t dim = 0;               ///< 0 only when no record has a vector
    bool from_npy = false;
};

/// Reads the records and their vectors: a .npy row, else a --vectors row, else the text embedded
/// (64 at a time), else `textless`. Throws InputError naming the file and line (or row) for
/// NaN/Inf or zero given vectors and dimension mismatches.
IdeaVectors load_idea_vectors(const IdeaVectorsOptions& options);

/// All queries, resolved against a corpus.
struct QueryInput {
    std::vector<QueryRecord> records;   ///< one per query, in input order (ids "0".."n-1" for .npy)
    std::vector<float> vectors;         ///< n x dim float32 (L2-normalised by the backend)
    std::size_t dim = 0;
    /// Per query: its row limit (cutoff), its cutoff's text, the rows and ids it leaves out (its
    /// own paper included) and the excluded ids not in the corpus.
    std::vector<RecordScope> scopes;
    /// Metadata filters as SearchQueries::filters: empty when no filter was given; else one per
    /// query (the run's and the record's together; equal filters share one bitmask).
    std::vector<std::shared_ptr<const RowFilter>> filters;
};

/// The scope of each record: its own date or `cutoff`, `exclude` plus its own exclusions, and
/// (with `own_paper`) the corpus paper it names.
std::vector<RecordScope> resolve_scopes(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                        const std::optional<PartialDate>& cutoff,
                                        const std::vector<std::string>& exclude, bool own_paper);

/// Reads and resolves the queries. A query's vector is its .npy row, else its --vectors row, else
/// its text embedded, else (no text) the vector of the corpus paper with its id. Throws
/// InputError naming the file and line (or row) for a record without a usable vector, a
/// dimension mismatch, NaN/Inf or zero vectors.
QueryInput load_query_input(const Corpus& corpus, const QueryInputOptions& options);

/// The metadata filter flags (--field, --venue, --venue-file, --min-citations, --papers).
struct FilterFlags {
    std::vector<std::string> fields;  ///< each comma-separated; the flag may repeat
    std::vector<std::string> venues;  ///< each comma-separated; the flag may repeat
    std::string venue_file;           ///< a file of venues, one per line (names that hold commas)
    std::string min_citations;        ///< "" = no floor
    std::string papers;               ///< a file of paper ids, one per line, or JSON Lines with "id"
};

/// The flags every command that reads queries or ideas shares.
struct QueryFlags {
    std::string path;        ///< --queries / --ideas
    std::string vectors;     ///< --vectors
    std::string cutoff;      ///< --cutoff
    std::string exclude;     ///< --exclude, comma-separated ids
    EmbedderFlags embedder;  ///< --embedder and friends, for text records
    FilterFlags filter;      ///< metadata filters for every query
    std::size_t threads = 0;
    bool quiet = false;
};

/// Adds --field, --venue, --venue-file, --min-citations and --papers to `cmd`; an empty or
/// malformed value is a usage error naming its flag.
void add_filter_flags(CLI::App& cmd, FilterFlags& flags);
/// The run's filter from its flags (reading the --venue-file and --papers files).
PaperFilter run_filter(const FilterFlags& flags);
/// Per record: the run's filter with the record's own "filter"; empty when neither gives any.
/// Papers the run's list names that are not in the corpus are reported in a note (how many,
/// and the first few), as unknown excluded ids are.
std::vector<std::shared_ptr<const RowFilter>> record_filters(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                                             const PaperFilter& run);

/// Comma-separated ids ("a,b,,c" -> a, b, c).
std::vector<std::string> split_ids(const std::string& list);
/// Comma-separated counts ("5,20,100"), in the order given, each an integer from 1 to `max` (0:
/// no upper bound); anything else, or an empty list, is a UsageError naming `flag`.
std::vector<std::size_t> parse_counts(const std::string& list, const std::string& flag, std::size_t max);

/// load_query_input for a command's flags: parses the cutoff and exclusions, embeds text records
/// with the corpus's encoder (refusing another), and shows embedding progress labelled `what`.
QueryInput load_queries(const Corpus& corpus, const QueryFlags& flags, const std::string& what);

/// The rows [begin, end) of `input` as SearchQueries (views into `input`).
SearchQueries query_slice(const QueryInput& input, std::size_t begin, std::size_t end);

/// The records whose ids are not in `done` (finished by an earlier, interrupted run), as runs of
/// consecutive records [begin, end) of at most `max_run` each, in input order.
std::vector<std::pair<std::size_t, std::size_t>> pending_runs(const QueryInput& input, const std::set<std::string>& done,
                                                              std::size_t max_run);

/// The ideas `which` (indexes into `input`, in that order) as one scorer batch; `vectors` receives
/// their rows and must outlive the batch.
ScoreInput score_batch_of(const QueryInput& input, const std::vector<std::size_t>& which, std::vector<float>& vectors);

}  // namespace novelty::cli
