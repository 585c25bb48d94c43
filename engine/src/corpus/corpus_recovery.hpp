// Finishing what an interrupted `corpus import` left behind. An import builds DIR.importing-PID
// and, with --overwrite, moves the old corpus to DIR.replaced-PID before renaming the new one
// to DIR; a kill can stop it between any two of these steps.
#pragma once

#include "corpus/corpus_lock.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace novelty {

/// `dir` as an absolute, normal path without a trailing separator ("c/" and "c" are one corpus)
/// and with symbolic links resolved: the path every lock and rename of the corpus uses.
std::filesystem::path corpus_dir_path(const std::string& dir);

/// Looks for DIR.importing-PID and DIR.replaced-PID folders whose import is gone: judged by the
/// lock the import holds on its DIR.importing-PID (corpus_lock.hpp's WorkFolderLock) from before
/// it has that name until the new corpus is in place, never by the PID alone. When DIR is
/// missing and such a pair exists, DIR is completed from the new corpus when its build had
/// finished (it holds a manifest) or else restored from the old one; every other leftover of a
/// dead import is removed. Each action is reported through notice(). Failures to remove are
/// reported, never thrown: a read-only parent folder still lets the corpus be read.
void recover_interrupted_import(const std::filesystem::path& dir);

/// True when a DIR.adding-PID folder of a dead in-place `corpus add` is beside DIR (dead: its
/// work folder's lock is free, corpus_lock.hpp).
bool has_interrupted_add(const std::filesystem::path& dir);
/// Rolls each dead in-place add of DIR forward or back (add_in_place.hpp), with a notice; the
/// caller holds DIR's exclusive lock. Failures are reported, not thrown: the corpus's own
/// checks then refuse it with the reason.
void recover_interrupted_add(const std::filesystem::path& dir);
/// DIR's lock, held shared (the lock of every reader), after any interrupted in-place add was
/// recovered under the exclusive lock.
std::unique_ptr<CorpusLock> lock_for_reading(const std::filesystem::path& dir);
/// Recovers an interrupted in-place add of DIR, if there is one, under the exclusive lock
/// (waiting for readers); for commands that replace DIR.
void recover_interrupted_add_waiting(const std::filesystem::path& dir);

}  // namespace novelty
