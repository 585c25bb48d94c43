// Writing a file so that a crash never leaves a half-written file under its name.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace novelty {

/// A file written under a temporary sibling name and renamed to its path by commit(); destroyed
/// without commit(), it removes the temporary file and leaves the path untouched.
class AtomicFile {
public:
    explicit AtomicFile(const std::string& path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    void write(const void* data, std::size_t n_bytes);
    /// Flushes, fsyncs, renames into place and syncs the directory.
    void commit();

private:
    std::string path_;
    std::string tmp_;
    std::FILE* file_ = nullptr;
};

/// Puts the complete file `from` at `to` (in the same directory) so that `to` is either its old
/// content or all of `from`'s: fsync of `from`, rename, fsync of the directory. Throws Error.
void rename_into_place(const std::string& from, const std::string& to);

}  // namespace novelty
