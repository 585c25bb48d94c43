// Finishing what an interrupted `corpus import` left behind. An import builds DIR.importing-PID
// and, with --overwrite, moves the old corpus to DIR.replaced-PID before renaming the new one
// to DIR; a kill can stop it between any two of these steps.
#pragma once

#include <filesystem>
#include <string>

namespace novelty {

/// `dir` as an absolute, normal path without a trailing separator ("c/" and "c" are one corpus).
std::filesystem::path corpus_dir_path(const std::string& dir);

/// Looks for DIR.importing-PID and DIR.replaced-PID folders whose process is gone. When DIR is
/// missing and such a pair exists, DIR is completed from the new corpus when its build had
/// finished (it holds a manifest) or else restored from the old one; every other leftover of a
/// dead import is removed. Each action is reported through notice(). Failures to remove are
/// reported, never thrown: a read-only parent folder still lets the corpus be read.
void recover_interrupted_import(const std::filesystem::path& dir);

}  // namespace novelty
