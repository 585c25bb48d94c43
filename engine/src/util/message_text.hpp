// Putting values from the input into error messages: one way, everywhere. A value is cut to a
// short prefix, bytes that are not printable UTF-8 are escaped, and the result is always valid
// UTF-8, so that a message can be written to a terminal, a JSON document or a manifest whatever
// the input held.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace novelty {

/// The default length limit of a value shown in a message, in bytes.
constexpr std::size_t message_value_bytes = 200;

/// `text` made safe for a message: control characters and bytes that are not valid UTF-8 are
/// written as escapes ("\n", "\x00"); when it holds more than `max_bytes` bytes, only the
/// first ones are kept (never cutting a character in two), followed by "... (N bytes)".
std::string clip_for_message(std::string_view text, std::size_t max_bytes = message_value_bytes);

/// clip_for_message() in single quotes: 'value', or 'first bytes...' (N bytes).
std::string quote_value(std::string_view value, std::size_t max_bytes = message_value_bytes);

/// n with its digits grouped by commas: 87691 -> "87,691".
std::string thousands(unsigned long long n);

}  // namespace novelty
