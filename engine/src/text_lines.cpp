#include "text_lines.hpp"

#include "novelty/error.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace novelty {

std::size_t find_invalid_utf8(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len;
        std::uint32_t cp;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else return i;
        if (i + len > n) return i;
        for (std::size_t k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
        if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return std::string_view::npos;
}

LineReader::LineReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "is a directory, not a file");
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno ? errno : ENOENT));
    gzbuffer(gz, 1 << 18);
    gz_ = gz;
    file_size_ = std::filesystem::file_size(path, ec);
    if (ec) file_size_ = 0;
}

LineReader::~LineReader() {
    if (gz_) gzclose(static_cast<gzFile>(gz_));
}

std::uint64_t LineReader::bytes_read() const {
    return gz_ ? static_cast<std::uint64_t>(gzoffset(static_cast<gzFile>(gz_))) : 0;
}

bool LineReader::fill() {
    if (eof_) return false;
    if (buffer_pos_ > 0) {
        buffer_.erase(0, buffer_pos_);
        buffer_pos_ = 0;
    }
    const std::size_t old_size = buffer_.size();
    const std::size_t chunk = 1 << 18;
    buffer_.resize(old_size + chunk);
    const int got = gzread(static_cast<gzFile>(gz_), buffer_.data() + old_size, static_cast<unsigned>(chunk));
    if (got < 0) {
        int code = 0;
        const char* message = gzerror(static_cast<gzFile>(gz_), &code);
        buffer_.resize(old_size);
        throw InputError(path_, line_number_ + 1, std::string("read error: ") + (message ? message : "unknown"));
    }
    buffer_.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) {
        int code = 0;
        const char* message = gzerror(static_cast<gzFile>(gz_), &code);
        if (code != Z_OK && code != Z_BUF_ERROR)
            throw InputError(path_, line_number_ + 1, std::string("corrupt compressed data: ") + message);
        if (code == Z_BUF_ERROR)
            throw InputError(path_, line_number_ + 1, "compressed file ends early (truncated gzip stream)");
        eof_ = true;
        return false;
    }
    return true;
}

bool LineReader::next(std::string& line) {
    for (;;) {
        const std::size_t newline = buffer_.find('\n', buffer_pos_);
        if (newline != std::string::npos) {
            line.assign(buffer_, buffer_pos_, newline - buffer_pos_);
            buffer_pos_ = newline + 1;
            break;
        }
        if (!fill()) {
            if (buffer_pos_ >= buffer_.size()) return false;
            line.assign(buffer_, buffer_pos_, std::string::npos);
            buffer_pos_ = buffer_.size();
            break;
        }
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_number_;
    return true;
}

}  // namespace novelty
