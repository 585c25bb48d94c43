// The query syntax of the Graph API's bulk paper search, parsed into a tree:
//   fish ladder        both words (AND is implied; "+" may be written)
//   fish | ladder      either word
//   fish -ladder       the first without the second ("-" before a term, phrase or group)
//   "fish ladder"      the phrase; "fish ladder"~3 its words within 3 positions of each other
//   fish*              a word starting so
//   fish~ / fish~1     a word within edit distance 2 (or the number given)
//   (fish ladder) | outflow   grouping
// "|" binds loosest, then AND, then "-". Matching is over titles and abstracts, case-insensitive.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace novelty::host::s2 {

struct BulkQuery {
    enum class Kind { word, phrase, all_of, any_of, none_of };
    Kind kind = Kind::word;
    std::vector<std::string> words;  ///< word: one; phrase: its words (lower case)
    bool prefix = false;             ///< word*
    int distance = -1;               ///< word~N: edit distance; phrase~N: slop; -1 none
    std::vector<BulkQuery> parts;    ///< all_of / any_of: operands; none_of: the one negated
};

/// Parses `text`; throws S2Error 400 naming the problem (an unclosed quote or bracket, an
/// operator with nothing to apply to, more than 256 words and phrases, brackets and '-' nested
/// more than 64 deep). An empty or blank query gives an all_of with no parts
/// (every paper).
BulkQuery parse_bulk_query(const std::string& text);

/// Levenshtein distance of two byte strings, stopping early once it exceeds `limit`
/// (then returns limit + 1).
std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t limit);

}  // namespace novelty::host::s2
