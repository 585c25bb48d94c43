// Writing .npz archives (numpy.savez's format: a zip of .npy members, stored uncompressed), so
// that results reach numpy users as arrays: numpy.load(path)["sims"].
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace novelty {

/// Streams arrays into PATH.npz: each array is started with begin_array() and its bytes follow
/// in C order through write(); commit() checks that every array got exactly its bytes, writes
/// the zip directory and renames the temporary file onto PATH. Without commit() (an error, a
/// kill) PATH is left as it was. Members and the archive must stay under 4 GiB (no zip64):
/// larger outputs are refused with an error that says so.
class NpzWriter {
public:
    explicit NpzWriter(const std::string& path);
    ~NpzWriter();
    NpzWriter(const NpzWriter&) = delete;
    NpzWriter& operator=(const NpzWriter&) = delete;

    /// Starts member NAME.npy holding an array of numpy type `descr` ("<f4", "<i8", "<U12", ...)
    /// and the given shape (one entry per dimension); `item_bytes` is the size of one element.
    void begin_array(const std::string& name, const std::string& descr, const std::vector<std::size_t>& shape,
                     std::size_t item_bytes);
    void write(const void* data, std::size_t n_bytes);
    void commit();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Appends `text` (UTF-8) to `out` as one element of a numpy "<U{width}" array: UTF-32
/// little-endian code points, zero-padded to `width`. Throws UsageError (appending nothing)
/// when the text has more than `width` code points.
void append_utf32_item(std::vector<char>& out, const std::string& text, std::size_t width);

/// Code points in a UTF-8 string (bytes that do not start a code point are not counted).
std::size_t utf8_length(const std::string& text);

}  // namespace novelty
