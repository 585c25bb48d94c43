// Query rewrites made elsewhere (by any LLM, or by hand), read from a JSON Lines file, and the
// QueryRewriter that hands one query's list to the engine's fusion.
#pragma once

#include "novelty/retrieval/retrieval.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace novelty::cli {

/// One query's rewrites: "expand" (rewritten or augmented questions) and "hyde" (hypothetical
/// abstracts), each in file order. An error is set when the LLM call that should have made the
/// list failed: then that mode ranks the query text alone (the list is empty).
struct QueryRewrites {
    std::vector<std::string> expand;
    std::vector<std::string> hyde;
    std::string expand_error;  ///< "" = no failure
    std::string hyde_error;
};

/// Reads `{"id": QID, "expand": [STR...], "hyde": [STR...]}` per line (both lists optional; other
/// keys ignored), or the JSON Lines output of `novelty retrieve --jsonl` itself:
/// `{"query": QID, "rewrites": {"expand": [...], "hyde": [...]}, "rewrite_errors": {...}}`, so a
/// run's rewrites can be fed back. Throws InputError naming the file and line for malformed JSON,
/// a missing or repeated id, or a list that is not an array of strings.
std::map<std::string, QueryRewrites> read_rewrites_file(const std::string& path);

/// A QueryRewriter that returns the first n texts of a fixed list, whatever the query.
class ListRewriter : public QueryRewriter {
public:
    ListRewriter(std::string name, std::vector<std::string> texts) : name_(std::move(name)), texts_(std::move(texts)) {}
    std::string name() const override { return name_; }
    std::vector<std::string> rewrite(const std::string& /*query*/, std::size_t n) override {
        return std::vector<std::string>(texts_.begin(), texts_.begin() + static_cast<std::ptrdiff_t>(std::min(n, texts_.size())));
    }

private:
    std::string name_;
    std::vector<std::string> texts_;
};

}  // namespace novelty::cli
