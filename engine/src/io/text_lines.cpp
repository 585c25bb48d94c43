#include "io/text_lines.hpp"

#include "novelty/util/checksum.hpp"
#include "novelty/util/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

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

namespace {

constexpr std::size_t chunk_bytes = std::size_t{1} << 18;

std::string long_line_problem(std::size_t max_line_bytes) {
    return "line longer than the limit of " + std::to_string(max_line_bytes) +
           " bytes (no record is that long: is the file JSON Lines, one record per line?)";
}

}  // namespace

// The file's bytes as read (hashed on the way), and the gzip decoder when they are compressed.
struct LineReader::Source {
    int fd = -1;
    Sha256 hash;
    std::uint64_t consumed = 0;  // raw bytes read from the file
    std::vector<unsigned char> raw = std::vector<unsigned char>(chunk_bytes);
    std::size_t raw_pos = 0, raw_len = 0;
    bool raw_eof = false;
    enum class Kind { unknown, plain, gzip } kind = Kind::unknown;
    z_stream zs{};
    bool zs_ready = false;
    bool in_member = false;  // inside a gzip member: its end has not been seen yet
    bool trailing = false;   // bytes after the last gzip member, ignored (as gzip -d does)

    ~Source() {
        if (zs_ready) inflateEnd(&zs);
        if (fd >= 0) ::close(fd);
    }

    // Reads more raw bytes at raw[raw_len...]; false at end of file.
    bool read_more(const std::string& path, std::size_t line) {
        if (raw_pos == raw_len) raw_pos = raw_len = 0;
        if (raw_eof || raw_len == raw.size()) return false;
        ssize_t got;
        do got = ::read(fd, raw.data() + raw_len, raw.size() - raw_len);
        while (got < 0 && errno == EINTR);
        if (got < 0) throw InputError(path, line, std::string("read error: ") + std::strerror(errno));
        if (got == 0) {
            raw_eof = true;
            return false;
        }
        hash.update(raw.data() + raw_len, static_cast<std::size_t>(got));
        consumed += static_cast<std::uint64_t>(got);
        raw_len += static_cast<std::size_t>(got);
        return true;
    }

    void detect(const std::string& path) {
        while (raw_len < 2 && read_more(path, 1)) {
        }
        kind = raw_len >= 2 && raw[0] == 0x1F && raw[1] == 0x8B ? Kind::gzip : Kind::plain;
        if (kind == Kind::gzip) {
            if (inflateInit2(&zs, 15 + 16) != Z_OK) throw InputError(path, 0, "cannot start the gzip decoder");
            zs_ready = true;
        }
    }

    // Appends decoded bytes to `out`; false at the end of the input.
    bool decode_into(std::string& out, const std::string& path, std::size_t line) {
        if (kind == Kind::unknown) detect(path);
        if (kind == Kind::plain) {
            if (raw_pos == raw_len && !read_more(path, line)) return false;
            out.append(reinterpret_cast<const char*>(raw.data() + raw_pos), raw_len - raw_pos);
            raw_pos = raw_len;
            return true;
        }
        for (;;) {
            if (raw_pos == raw_len && !read_more(path, line)) {
                if (in_member) throw InputError(path, line, "compressed file ends early (truncated gzip stream)");
                return false;
            }
            if (trailing) {
                raw_pos = raw_len;
                continue;
            }
            if (!in_member) {
                if (raw[raw_pos] != 0x1F) {  // not another gzip member
                    trailing = true;
                    continue;
                }
                inflateReset(&zs);
                in_member = true;
            }
            zs.next_in = raw.data() + raw_pos;
            zs.avail_in = static_cast<uInt>(raw_len - raw_pos);
            const std::size_t old_size = out.size();
            out.resize(old_size + chunk_bytes);
            zs.next_out = reinterpret_cast<Bytef*>(out.data() + old_size);
            zs.avail_out = static_cast<uInt>(chunk_bytes);
            const int status = inflate(&zs, Z_NO_FLUSH);
            out.resize(old_size + (chunk_bytes - zs.avail_out));
            raw_pos = raw_len - zs.avail_in;
            if (status == Z_STREAM_END) in_member = false;
            else if (status != Z_OK && status != Z_BUF_ERROR)
                throw InputError(path, line, std::string("corrupt compressed data: ") + (zs.msg ? zs.msg : "inflate failed"));
            if (out.size() > old_size) return true;
        }
    }
};

LineReader::LineReader(const std::string& path, std::size_t max_line_bytes)
    : path_(path), max_line_bytes_(max_line_bytes), source_(std::make_unique<Source>()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "is a directory, not a file");
    source_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (source_->fd < 0) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
    struct stat info{};
    if (::fstat(source_->fd, &info) == 0 && S_ISREG(info.st_mode)) file_size_ = static_cast<std::uint64_t>(info.st_size);
}

LineReader::~LineReader() = default;

std::uint64_t LineReader::bytes_read() const { return source_->consumed - (source_->raw_len - source_->raw_pos); }

bool LineReader::fill() {
    if (eof_) return false;
    if (!source_->decode_into(buffer_, path_, line_number_ + 1)) eof_ = true;
    return !eof_;
}

void LineReader::skip_long_line() {
    ++line_number_;
    buffer_.clear();
    buffer_pos_ = scanned_to_ = 0;
    while (fill()) {
        const std::size_t newline = buffer_.find('\n');
        if (newline != std::string::npos) {
            buffer_pos_ = scanned_to_ = newline + 1;
            break;
        }
        buffer_.clear();
    }
    throw InputError(path_, line_number_, long_line_problem(max_line_bytes_));
}

bool LineReader::next(std::string& line) {
    for (;;) {
        const std::size_t newline = buffer_.find('\n', scanned_to_);
        if (newline != std::string::npos) {
            if (newline - buffer_pos_ > max_line_bytes_) {
                buffer_pos_ = scanned_to_ = newline + 1;
                ++line_number_;
                throw InputError(path_, line_number_, long_line_problem(max_line_bytes_));
            }
            line.assign(buffer_, buffer_pos_, newline - buffer_pos_);
            buffer_pos_ = scanned_to_ = newline + 1;
            break;
        }
        if (buffer_.size() - buffer_pos_ > max_line_bytes_) skip_long_line();
        if (buffer_pos_ > 0) {  // drop the lines already returned before reading more
            buffer_.erase(0, buffer_pos_);
            buffer_pos_ = 0;
        }
        scanned_to_ = buffer_.size();
        if (!fill()) {
            if (buffer_pos_ >= buffer_.size()) return false;
            line.assign(buffer_, buffer_pos_, std::string::npos);
            buffer_pos_ = scanned_to_ = buffer_.size();
            break;
        }
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_number_;
    return true;
}

std::string LineReader::sha256() {
    Source& s = *source_;
    s.raw_pos = s.raw_len;
    while (s.read_more(path_, line_number_ + 1)) s.raw_pos = s.raw_len;
    return s.hash.hex();
}

}  // namespace novelty
