// What the Semantic Scholar-compatible API needs beyond one paper's record: the authors (as the
// importers keep them: "authors", "authors_parsed" or "authorships") with their papers, read once
// from every record of the corpus on first use and kept for the server's life (the server's
// corpus does not change under it); and the corpus's citation graph (corpus/citations), which
// also finds papers by the ids their records carry.
#pragma once

#include "corpus/citations/citation_graph.hpp"
#include "server/s2/s2_metadata.hpp"
#include "server/s2/s2_text_index.hpp"
#include "server/server_engine.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host::s2 {

/// An author with an id, and the corpus rows of their papers (ascending).
struct CatalogueAuthor {
    std::string id;
    std::string name;
    std::vector<std::size_t> rows;
    std::int64_t citations = 0;  ///< the sum of their corpus papers' citation counts
    std::int64_t h_index = 0;    ///< over their corpus papers' citation counts
};

class S2Catalogue {
public:
    /// Reads every record of the engine's corpus.
    explicit S2Catalogue(ServerEngine& engine);

    /// The authors of `row`, in the record's order.
    const std::vector<Author>& authors(std::size_t row) const;
    /// The author with this id; null when none.
    const CatalogueAuthor* author(const std::string& id) const;
    /// Authors whose name holds every word of `query` (case-insensitive), by paper count
    /// (descending), then name and id.
    std::vector<const CatalogueAuthor*> search_authors(const std::string& query) const;

private:
    std::vector<std::vector<Author>> authors_;
    std::map<std::string, CatalogueAuthor> authors_by_id_;
};

/// The engine the routes serve, with its catalogue built on first use (thread-safe) and shared
/// by every request after.
class S2Corpus {
public:
    explicit S2Corpus(ServerEngine& engine) : engine_(engine) {}
    ServerEngine& engine() { return engine_; }
    const S2Catalogue& catalogue();
    /// The corpus's citation graph, opened on first use (built in memory for a corpus that keeps none).
    CitationGraph& graph();
    /// The row a 40-hex Semantic Scholar paper id (lower case) names, through the S2 URLs the
    /// records carry.
    std::optional<std::size_t> row_of_sha(const std::string& sha);
    /// The row an id names by the external ids the records carry ("DOI:x", "CorpusId:N",
    /// "ARXIV:x", "PMID:N", an OpenAlex work; the citation graph's keys), for corpora whose
    /// importer recorded no alias for it.
    std::optional<std::size_t> row_of_external_id(const std::string& id);
    /// The corpus's full-text index, opened on first use.
    S2TextIndex& text_index();

private:
    ServerEngine& engine_;
    std::once_flag once_, text_once_, graph_once_;
    std::unique_ptr<S2Catalogue> catalogue_;
    std::unique_ptr<S2TextIndex> text_index_;
    std::unique_ptr<CitationGraph> graph_;
};

/// Lower-cased runs of letters and digits (bytes >= 0x80 count as letters), in order.
std::vector<std::string> words_of(const std::string& text);

}  // namespace novelty::host::s2
