// Reading text files line by line, plain or gzip-compressed (detected from the content, not the
// name), with 1-based line numbers for error messages. Each file is read once, front to back, so
// pipes, FIFOs, /dev/stdin and process substitutions work like files; the SHA-256 of the bytes
// read is computed on the way. A line longer than a cap is an error, and memory stays linear in
// the cap whatever the input holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace novelty {

/// Byte offset (0-based) of the first byte that is not valid UTF-8 in `text` (overlong forms,
/// surrogates and code points above U+10FFFF are invalid), or std::string_view::npos.
std::size_t find_invalid_utf8(std::string_view text);

/// The longest line a LineReader accepts by default (16 MiB): far above any paper record.
constexpr std::size_t default_max_line_bytes = std::size_t{16} << 20;

class LineReader {
public:
    /// Opens `path` (a file, a FIFO, /dev/stdin, ...); throws InputError (line 0) when it cannot
    /// be opened or is a directory. Lines longer than `max_line_bytes` (after decompression,
    /// without the newline) are refused by next().
    explicit LineReader(const std::string& path, std::size_t max_line_bytes = default_max_line_bytes);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    /// Reads the next line without its "\n" (and "\r\n"). Returns false at end of file.
    /// Throws InputError for a read error or a corrupt or truncated gzip stream, and for a line
    /// longer than the cap (naming the line and the cap); after the latter the reader stands at
    /// the next line, so a caller may skip the long one and go on.
    bool next(std::string& line);
    /// Line number of the line last returned (1-based).
    std::size_t line_number() const { return line_number_; }
    /// Bytes consumed so far from the file (compressed bytes for gzip; for progress), and the
    /// file's size on disk (0 when it has none, as for a pipe).
    std::uint64_t bytes_read() const;
    std::uint64_t file_size() const { return file_size_; }
    const std::string& path() const { return path_; }
    /// SHA-256 of every byte of the file: reads whatever next() has not consumed yet (to the end
    /// of the input), then returns the digest. Call once, after the last next().
    std::string sha256();

private:
    struct Source;
    bool fill();
    [[noreturn]] void skip_long_line();

    std::string path_;
    std::size_t max_line_bytes_;
    std::unique_ptr<Source> source_;
    std::string buffer_;           // decoded bytes; the current line starts at buffer_pos_
    std::size_t buffer_pos_ = 0;
    std::size_t scanned_to_ = 0;   // no '\n' in buffer_[buffer_pos_, scanned_to_)
    bool eof_ = false;
    std::size_t line_number_ = 0;
    std::uint64_t file_size_ = 0;
};

}  // namespace novelty
