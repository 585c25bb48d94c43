// Adding papers to an existing corpus (novelty corpus add): new rows in date order, their
// vectors attached or embedded, and the cached neighbour densities updated, not recomputed.
#pragma once

#include "novelty/corpus/import.hpp"
#include "novelty/encoder/embedder.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

struct AddPapersOptions {
    /// The new records, in any import format; read in order after the corpus's own papers. A
    /// record whose id is already in the corpus replaces that paper when it differs (an identical
    /// one is dropped); a PubMed DeleteCitation removes one.
    std::vector<ImportSource> sources;
    bool skip_invalid = false;
    /// Makes the embedder for new papers that arrive without a vector (s2 embeddings files give
    /// theirs), called at most once and only when needed; it must be the corpus's own embedder
    /// (UsageError otherwise). Empty: such papers are an error when the corpus has vectors.
    std::function<std::unique_ptr<Embedder>()> make_embedder;
    std::size_t embed_batch = 256;
    std::function<void(const ImportProgress&)> on_progress;
    std::function<void(const SkippedRecord&)> on_skip;
    std::function<void(const SkippedRecord&)> on_duplicate;
};

struct AddPapersSummary {
    std::size_t n_papers = 0;    ///< rows after the update
    std::size_t n_added = 0;     ///< rows that are new (added or replacing a paper)
    std::size_t n_removed = 0;   ///< old rows gone (deleted or replaced)
    std::size_t n_embedded = 0;  ///< new rows embedded with the corpus's embedder
    /// s2: papers of the corpus given a new vector alone (no new papers record); each counts as
    /// a paper replaced (in n_added and n_removed).
    std::size_t n_vectors_replaced = 0;
    /// s2: revised papers given without a vector, which kept the vector they had.
    std::size_t n_vectors_kept = 0;
    /// The first row whose paper changed place (rows from here on were renumbered); none when
    /// every old row kept its number (papers only appended).
    std::optional<std::size_t> first_renumbered_row;
    std::vector<std::string> caches_updated;  ///< cache files carried over, updated
    std::vector<std::string> caches_dropped;  ///< cache files removed (prefix caches, other backends)
    std::size_t rows_searched = 0;            ///< rows searched in full for the updated caches
    std::size_t rows_entered = 0;             ///< old rows a new paper entered the stored neighbours of
    /// The density store (docs/formats.md): its lists carried over (renumbered, offered the new
    /// rows within their prefix) and dropped (their paper or a stored neighbour removed).
    std::size_t density_lists_kept = 0;
    std::size_t density_lists_dropped = 0;
    double cache_seconds = 0;                 ///< wall time spent updating the caches
    double papers_seconds = 0;                ///< wall time spent reading the inputs and writing papers.sqlite
    /// True when papers.sqlite was rebuilt from all papers (a corpus imported before the keyed
    /// layout, or s2 abstracts or vectors for old papers given without their papers records);
    /// false when only the new papers were written into it (in place, or into a copy when the
    /// corpus was open in another process).
    bool rebuilt = false;
};

/// Adds the papers of `options.sources` to the corpus in `dir`. Rows stay in date order (rows
/// may be renumbered: the summary and the manifest's "updates" say from which row). With
/// vectors, kept rows keep theirs and new rows get theirs from the s2 embeddings or the
/// embedder; each self-join cache of the whole corpus computed on the CPU is updated with
/// update_self_join (the result a full `novelty index` gives); other caches are dropped.
/// papers.sqlite is updated in place, in one transaction, under the corpus directory's exclusive
/// lock, with the new vectors and caches built beside the corpus and moved in after the commit
/// (docs/formats.md, "corpus add in place"); when another process has the corpus open, the new
/// corpus is built beside the old one from a copy and replaces it atomically (as import
/// --overwrite). Either way an interruption leaves the old corpus or the new one (the next open
/// finishes or undoes an interrupted in-place add). Throws as import_corpus does, and
/// CorpusError when `dir` is not a corpus.
AddPapersSummary add_papers(const std::string& dir, const AddPapersOptions& options);

}  // namespace novelty
