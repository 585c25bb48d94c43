// The prompts of the LLM stages (host/prompts/*.txt), compiled into the binary at build time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace novelty::host {

/// The text of prompt `name` (the file name without ".txt": "extract_claims", "entailment",
/// "verdict", "repair", "expand_query", "hyde_abstracts"). Throws UsageError for an unknown name.
std::string_view prompt_text(std::string_view name);
/// The names of every embedded prompt, in file-name order.
std::vector<std::string> prompt_names();

namespace detail {
struct PromptEntry {
    const char* name;
    const char* text;
};
extern const PromptEntry embedded_prompts[];
extern const std::size_t n_embedded_prompts;
}  // namespace detail

}  // namespace novelty::host
