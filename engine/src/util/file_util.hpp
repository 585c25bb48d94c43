// Small file-system helpers for atomic writes.
#pragma once

#include "novelty/util/atomic_file.hpp"

#include <string>

namespace novelty {

/// A name for a temporary sibling of `path` (same directory, so a rename is atomic).
std::string temp_sibling(const std::string& path);
/// Writes `bytes` to `path` atomically: temporary sibling, fsync, rename, fsync of the directory.
void write_file_atomic(const std::string& path, const std::string& bytes);
/// fsync of a file or directory by path; throws Error on failure.
void fsync_path(const std::string& path);
/// Removes the temporary files ("NAME.tmp-PID-N", as temp_sibling and NpyWriter make them) in
/// `dir` whose writing process is gone (killed part-way). Errors are ignored.
void remove_stale_temp_files(const std::string& dir);
/// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();

}  // namespace novelty
