// SHA-256 checksums of files and strings, as lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace novelty {

/// SHA-256 of the whole file at `path`, streamed; throws Error when it cannot be read.
std::string sha256_file(const std::string& path);
/// SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace novelty
