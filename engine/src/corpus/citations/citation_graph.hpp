// Reading the citation graph of a corpus (citation_table.hpp) by row, for the Semantic
// Scholar-compatible API's citations, references and id lookups. A corpus imported before the
// graph was kept in papers.sqlite gets it built in memory from its records on open (the same
// build an import does; `corpus add` or a new import stores it).
#pragma once

#include "corpus/sqlite_db.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace novelty {

/// One edge seen from a paper: the other paper's row (none: the cited work is not in the
/// corpus, then named by `id` under the externalIds key `id_kind`, both "" when unknown), and
/// what the S2 citations dataset said of it (unknown when it supplied nothing).
struct CitationEdge {
    std::optional<std::size_t> row;
    std::string id_kind;
    std::string id;
    std::optional<bool> influential;
    std::optional<std::string> contexts;  ///< a JSON array of strings
    std::optional<std::string> intents;   ///< a JSON array: strings, or a list of strings per context
};

class CitationGraph {
public:
    /// Opens the graph of the corpus at `corpus_dir` (papers.sqlite read-only); `format`: the
    /// import format its sources share ("" when they differ), used only when the graph must be
    /// built in memory. Thread-safe (one mutex).
    CitationGraph(const std::string& corpus_dir, const std::string& format);
    ~CitationGraph();

    /// The references of `row`: the record's list in its order, then the dataset's edges.
    std::vector<CitationEdge> references(std::size_t row);
    /// How many references `row` has.
    std::size_t n_references(std::size_t row);
    /// The papers citing `row`, by row ascending (a paper citing itself left out).
    std::vector<CitationEdge> citations(std::size_t row);
    /// The row of the paper that holds the citation key `key` (the first by key when several
    /// do; citation_keys.hpp), none when no paper does.
    std::optional<std::size_t> row_of_key(const std::string& key);
    /// False when the corpus holds no graph and it was built in memory.
    bool stored() const { return stored_; }

private:
    std::vector<CitationEdge> edges(SqliteStatement& q, std::size_t row);

    std::unique_ptr<SqliteDb> db_;
    bool stored_ = true;
    std::string rows_;  ///< a table of (row, key) of the corpus
    std::string cite_;  ///< the schema of the citation tables
    std::mutex mutex_;
};

}  // namespace novelty
