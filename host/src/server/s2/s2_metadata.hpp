// What the Semantic Scholar paper fields are made of, read from a corpus paper's record: its
// authors, a URL and a BibTeX entry (its ids in other catalogues: server/paper_ids.hpp). Each reads the keys the
// importers keep in the record's `extra` object (docs/formats.md) and gives "" or an empty list
// for what the record does not hold; nothing is guessed.
#pragma once

#include "novelty/corpus/paper.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace novelty::host::s2 {

struct Author {
    std::string name;
    /// "" when the record gives none; an OpenAlex author URL is kept as its last segment ("A123"),
    /// so that it can stand in a path (/author/{id}).
    std::string author_id;
};

/// The authors, in the record's order, from `authors` (a list of {"name", "authorId"} objects or of
/// names, or one string of names separated by " and " or commas), `authors_parsed` (the arXiv
/// snapshot's [last, first, suffix] lists) or `authorships` (OpenAlex's {"author": {"display_name",
/// "id"}}). Empty when none of them is there.
std::vector<Author> authors_of(const nlohmann::json& extra);

/// The record's `url` when it is a string; else a link made from its DOI, arXiv id or PMID (in
/// that order of preference); else "".
std::string url_of(const nlohmann::json& extra, const nlohmann::ordered_json& ids);

/// A BibTeX entry of the paper: @inproceedings when the venue is known and not a journal
/// (the record's `journal` absent), else @article; key = first author's last name (or "paper") +
/// year + the title's first word of four letters or more, lower-cased ASCII letters and digits;
/// fields title, author (" and "-separated), booktitle or journal (the venue), year, doi when
/// known. Braces and backslashes in values are escaped.
std::string bibtex(const Paper& paper, const std::vector<Author>& authors, const nlohmann::ordered_json& ids,
                   const nlohmann::json& extra);

}  // namespace novelty::host::s2
