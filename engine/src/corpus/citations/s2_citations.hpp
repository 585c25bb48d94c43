// The Semantic Scholar "citations" dataset: one JSON object per line,
//   {"citationid", "citingcorpusid", "citedcorpusid", "isinfluential", "contexts", "intents"}
// (camel-case keys of the API read too), staged beside the papers of an s2 import
// (staging.s2_citations) and turned into edges of the corpus's citation graph once the papers
// are in place (citation_table.hpp). A line is told by its "citingcorpusid" key.
#pragma once

#include "corpus/sqlite_db.hpp"
#include "novelty/corpus/import.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace novelty::citations_detail {

/// One citations-dataset line, read.
struct S2Citation {
    std::string citing;                 ///< the citing paper's corpus id (digits)
    std::optional<std::string> cited;   ///< the cited paper's corpus id; none when the line gives null
    std::optional<bool> influential;    ///< null or absent: unknown
    std::optional<std::string> contexts;  ///< the JSON array of context strings, as given
    std::optional<std::string> intents;   ///< the JSON array of intents (strings, or a list per context)
};

/// True when `record` is a citations-dataset line.
bool is_s2_citation(const nlohmann::json& record);

/// Reads one citations line; InputError at file:line for a missing or non-numeric corpus id, an
/// "isinfluential" that is not true, false or null, "contexts" that are not a list of strings, or
/// "intents" that are not a list of strings or of lists of strings.
S2Citation s2_citation(const nlohmann::json& record, const std::string& file, std::size_t line);

/// Stages citations lines into staging.s2_citations (created here).
class S2CitationStager {
public:
    S2CitationStager(SqliteDb& db, const std::vector<ImportSource>& sources);
    /// Reads and stages the line `record` of source `file_index`. Returns false when it is passed
    /// over as a copy: the same edge was staged before with the same content (a line whose cited
    /// paper is null is read and kept nowhere: true, counted in n_without_cited()).
    /// InputError for a bad line, or one edge given twice with different content (naming the first).
    bool stage(const nlohmann::json& record, std::size_t file_index, std::size_t line);
    /// Lines passed over because they name no cited paper.
    std::size_t n_without_cited() const { return n_without_cited_; }

private:
    const std::vector<ImportSource>& sources_;
    SqliteStatement insert_, earlier_;
    std::size_t n_without_cited_ = 0;
};

}  // namespace novelty::citations_detail
