// JSON text written directly, byte for byte as nlohmann::json's compact dump() writes the same
// values: for output paths where building a json object per value costs more than the search
// (a search of 10,000 queries with k = 100 writes a million neighbour objects). Internal to the
// engine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace novelty::json_text {

/// Appends `text` as a JSON string (quoted, escaped as dump() escapes; UTF-8 kept as is).
/// Throws as dump() does on invalid UTF-8.
void append_string(std::string& out, std::string_view text);

/// Appends a number as dump() writes a double: shortest round-trip digits, "null" when not
/// finite.
void append_number(std::string& out, double value);

/// Appends an unsigned integer.
void append_count(std::string& out, std::size_t value);

}  // namespace novelty::json_text
