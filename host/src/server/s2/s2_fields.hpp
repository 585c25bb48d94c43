// The fields of the Semantic Scholar-compatible API: which names a `fields` parameter may hold
// (every paper and author field the Graph API documents, with its dotted sub-fields), and the
// paper and author objects answered for corpus papers (docs/api.md says how each is filled).
// A field the corpus cannot know is answered as the API answers a missing value (null, or []
// for lists); only names the API itself does not know are refused.
#pragma once

#include "novelty/corpus/paper.hpp"
#include "server/s2/s2_catalogue.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace novelty::host::s2 {

/// What a `fields` parameter selects of one kind of object.
enum class FieldScope {
    paper,   ///< a paper: its fields, "authors.*", "citations.*", "references.*", "embedding.*"
    edge,    ///< a citation or reference (/paper/{id}/citations): "contexts", "intents",
             ///< "contextsWithIntent", "isInfluential" and the cited or citing paper's fields
    author,  ///< an author: its fields and "papers.*"
};

/// The requested fields, in the order first named, each once ("paperId" and "authorId" are always
/// answered and not listed). `nested` holds, for "authors", "citations", "references" and
/// "papers", the sub-fields named with a dot (empty: the object's defaults). `embedding_model`
/// is the model of "embedding.MODEL" ("" for plain "embedding").
struct FieldSelection {
    std::vector<std::string> fields;
    std::map<std::string, std::vector<std::string>> nested;
    std::string embedding_model;
};

/// Parses `param` (`defaults`, comma-separated, when absent or empty). Throws S2Error 400
/// "Unrecognized or unsupported fields: [a, b]" naming every name outside the scope's fields.
FieldSelection parse_fields(const std::optional<std::string>& param, const std::string& defaults, FieldScope scope);

/// What the objects need besides the paper: the corpus's import format when all its sources
/// share one ("" otherwise), its encoder's name, and the served corpus (vectors, the catalogue
/// of authors and citations, other papers for nested lists).
struct PaperContext {
    std::string format;
    std::string embedder;
    S2Corpus* corpus = nullptr;
};
PaperContext context_of(S2Corpus& corpus);

/// The paper object: "paperId" first, then each selected field in order. Nested "citations" and
/// "references" are paper objects ({"paperId", "title"} by default); a reference outside the
/// corpus has "paperId": null and its id under "externalIds".
nlohmann::ordered_json paper_json(const Paper& paper, const FieldSelection& fields, const PaperContext& context);

/// The object of a cited work outside the corpus: paperId null, every field null but externalIds.
nlohmann::ordered_json outside_paper_json(const CitationEdge& work, const FieldSelection& fields);

/// The author object: "authorId" and "name" first, then each selected field in order ("papers"
/// as paper objects of their corpus papers, in row order).
nlohmann::ordered_json author_json(const Author& author, const FieldSelection& fields, const PaperContext& context);

}  // namespace novelty::host::s2
