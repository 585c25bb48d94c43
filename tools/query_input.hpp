// Turning a query file into searchable queries: vectors (from a .npy, a parallel --vectors
// file, or the corpus itself for records naming a corpus paper), per-query row limits from
// cutoffs, and per-query excluded rows. Shared by the commands that search.
#pragma once

#include "embedder_choice.hpp"
#include "novelty/corpus/corpus.hpp"
#include "novelty/corpus/paper_filter.hpp"
#include "novelty/encoder/embedder.hpp"
#include "novelty/request/query_records.hpp"
#include "novelty/request/resolver.hpp"
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

/// Reading ideas and their vectors without a corpus (novelty dedup and triage).
struct IdeaVectorsOptions {
    std::string path;          ///< .jsonl or .npy
    std::string vectors_path;  ///< optional .npy parallel to a .jsonl
    /// The dimension the vectors must have; 0 = whatever the files or the encoder give.
    std::size_t dim = 0;
    std::string dim_owner = "the corpus";  ///< what `dim` comes from, for messages
    /// Makes the embedder for records with text and no given vector; called at most once, only
    /// when such records exist. Empty: such records are an error.
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

/// Queries resolved against a corpus by the request layer (novelty/request/resolver.hpp).
using QueryInput = ResolvedBatch;

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
/// Reports in a note the papers the run's --papers list names that are not in the corpus (how
/// many, and the first few), as unknown excluded ids are.
void note_unknown_papers(const Corpus& corpus, const PaperFilter& run);
/// Per record: the run's filter with the record's own "filter" (the request layer's); empty when
/// neither gives any. Notes unknown papers of the run's list.
std::vector<std::shared_ptr<const RowFilter>> record_filters(const Corpus& corpus, const std::vector<QueryRecord>& records,
                                                             const PaperFilter& run);

/// Comma-separated ids ("a,b,,c" -> a, b, c).
std::vector<std::string> split_ids(const std::string& list);
/// Comma-separated counts ("5,20,100"), in the order given, each an integer from 1 to `max` (0:
/// no upper bound); anything else, or an empty list, is a UsageError naming `flag`.
std::vector<std::size_t> parse_counts(const std::string& list, const std::string& flag, std::size_t max);

/// The query file of a command's flags resolved by the request layer: parses the cutoff, the
/// exclusions and the filters, embeds text records with the corpus's encoder (refusing another)
/// with progress labelled `what`. `needs` says whether vectors and texts are needed (the
/// cutoff, exclusions and filter are taken from the flags).
QueryInput load_queries(const Corpus& corpus, const QueryFlags& flags, const std::string& what,
                        ResolveOptions needs = {});

/// The records whose ids are not in `done` (finished by an earlier, interrupted run), as runs of
/// consecutive records [begin, end) of at most `max_run` each, in input order.
std::vector<std::pair<std::size_t, std::size_t>> pending_runs(const QueryInput& input, const std::set<std::string>& done,
                                                              std::size_t max_run);


}  // namespace novelty::cli
