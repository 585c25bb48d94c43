// The one way JSON text from outside becomes a JSON value: input files, HTTP bodies, LLM and
// embedding-server answers, caches. Every caller goes through parse_json(), which
//  - refuses text nested deeper than max_json_depth (a deeply nested value would otherwise
//    exhaust the stack when it is copied, compared or written out again);
//  - turns every problem the JSON library reports (syntax, invalid UTF-8, a number out of range
//    such as 1e999) into one JsonError whose message is short and printable (the library's own
//    messages can echo megabytes of input, or bytes that are not UTF-8).
// Internal: shared by the engine, the host layer and the CLI; public headers carry no JSON types.
#pragma once

#include "novelty/util/error.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace novelty {

/// Text that is not acceptable JSON: malformed, not UTF-8, nested too deeply, or holding a number
/// out of range. The message is the problem alone, short and printable; callers add where the
/// text came from (a file and line, a request body, an LLM answer).
class JsonError : public Error {
public:
    using Error::Error;
};

/// Arrays and objects may nest this deep, no deeper ({"a": [1]} has depth 2).
constexpr std::size_t max_json_depth = 128;

/// Byte offset of the bracket that opens level `max_depth + 1` in `text`, or npos when the text
/// nests no deeper than `max_depth`. Brackets inside strings do not count. For any text the JSON
/// parser would accept a prefix of, the answer bounds the depth that prefix can build.
std::size_t json_depth_exceeded_at(std::string_view text, std::size_t max_depth = max_json_depth);

/// Parses `text` as one JSON value. Throws JsonError with a short message
/// for text that is not JSON, holds invalid UTF-8, nests deeper than max_json_depth, or holds a
/// number out of the range of a double.
nlohmann::json parse_json(std::string_view text);
/// As parse_json(), keeping the order of object keys.
nlohmann::ordered_json parse_ordered_json(std::string_view text);

/// A JSON value's type in words, for messages: "a string", "a number", "null", ...
std::string json_type_words(const nlohmann::json& value);

/// `value` as JSON text that never throws: strings that are not valid UTF-8 (which cannot be
/// written as JSON) have the bad bytes replaced by U+FFFD.
std::string dump_json(const nlohmann::json& value);
std::string dump_json(const nlohmann::ordered_json& value);

}  // namespace novelty
