// Reading text files line by line, plain or gzip-compressed (detected from the content, not the
// name), with 1-based line numbers for error messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace novelty {

/// Byte offset (0-based) of the first byte that is not valid UTF-8 in `text` (overlong forms,
/// surrogates and code points above U+10FFFF are invalid), or std::string_view::npos.
std::size_t find_invalid_utf8(std::string_view text);

class LineReader {
public:
    /// Opens `path`; throws InputError (line 0) when it cannot be opened.
    explicit LineReader(const std::string& path);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    /// Reads the next line without its "\n" (and "\r\n"). Returns false at end of file.
    /// Throws InputError for a read error or a corrupt gzip stream.
    bool next(std::string& line);
    /// Line number of the line last returned (1-based).
    std::size_t line_number() const { return line_number_; }
    /// Compressed bytes consumed so far (for progress), and the file's size on disk.
    std::uint64_t bytes_read() const;
    std::uint64_t file_size() const { return file_size_; }
    const std::string& path() const { return path_; }

private:
    bool fill();

    std::string path_;
    void* gz_ = nullptr;  // gzFile
    std::string buffer_;
    std::size_t buffer_pos_ = 0;
    bool eof_ = false;
    std::size_t line_number_ = 0;
    std::uint64_t file_size_ = 0;
};

}  // namespace novelty
