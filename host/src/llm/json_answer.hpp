// Reading an LLM's answer as one JSON object, shared by the LLM stages (claims, query rewriting).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace novelty::host::detail {

/// Parses `content` as exactly one JSON object, tolerating a ```json fence (and blank space)
/// around it; any other text beside the object is a problem. Returns the problem, or
/// std::nullopt with the object in `out`.
std::optional<std::string> parse_answer_object(const std::string& content, nlohmann::json& out);

/// True when `text` holds a letter or a digit (a non-ASCII character counts as one, except the
/// ellipsis U+2026): a model that echoes the prompt's "..." placeholders gives texts without.
bool has_word(const std::string& text);

}  // namespace novelty::host::detail
