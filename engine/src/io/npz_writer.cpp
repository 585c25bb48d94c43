// The .npz writer (novelty/io/npz.hpp): a zip archive of stored (uncompressed) .npy members. Each
// member's local header is written with placeholder CRC and sizes, the data is streamed while
// its CRC-32 is computed, and the header is patched in place once the member ends.
#include "novelty/io/npz.hpp"

#include "novelty/util/error.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace novelty {

namespace {

constexpr std::uint64_t zip_limit = std::numeric_limits<std::uint32_t>::max();

void put16(std::string& out, std::uint32_t v) {
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

/// A .npy header (format 1.0, or 2.0 when the dictionary is long) for a C-ordered array.
std::string npy_header(const std::string& descr, const std::vector<std::size_t>& shape) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) dims += ',';
    const std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    const bool v2 = dict.size() + 64 > 65535;
    const std::size_t prefix = v2 ? 12 : 10;
    const std::size_t pad = (64 - (prefix + dict.size() + 1) % 64) % 64;
    const std::size_t header_len = dict.size() + pad + 1;
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(v2 ? 2 : 1);
    out += '\0';
    if (v2)
        put32(out, static_cast<std::uint32_t>(header_len));
    else
        put16(out, static_cast<std::uint32_t>(header_len));
    out += dict;
    out.append(pad, ' ');
    return out + '\n';
}

struct Member {
    std::string name;
    std::uint64_t header_offset = 0;
    std::uint64_t size = 0;      ///< bytes of the .npy (header + data)
    std::uint64_t expected = 0;  ///< bytes it must have
    std::uint32_t crc = 0;
};

}  // namespace

struct NpzWriter::Impl {
    std::string path, temp;
    std::FILE* file = nullptr;
    std::vector<Member> members;
    bool open_member = false;
    std::uint64_t offset = 0;

    void raw(const void* data, std::size_t n) {
        if (n > 0 && std::fwrite(data, 1, n, file) != n)
            throw Error(temp + ": cannot write: " + std::strerror(errno));
        offset += n;
    }
    void data(const void* bytes, std::size_t n) {
        Member& m = members.back();
        m.crc = static_cast<std::uint32_t>(crc32_z(m.crc, static_cast<const Bytef*>(bytes), n));
        m.size += n;
        raw(bytes, n);
    }
    std::string local_header(const Member& m) const {
        std::string h;
        put32(h, 0x04034b50);
        put16(h, 20);  // version needed
        put16(h, 0);   // flags
        put16(h, 0);   // stored
        put16(h, 0);   // time
        put16(h, 0x21);  // date: 1980-01-01
        put32(h, m.crc);
        put32(h, static_cast<std::uint32_t>(m.size));
        put32(h, static_cast<std::uint32_t>(m.size));
        put16(h, static_cast<std::uint32_t>(m.name.size()));
        put16(h, 0);
        return h + m.name;
    }
    void end_member() {
        if (!open_member) return;
        Member& m = members.back();
        if (m.size != m.expected)
            throw Error(path + ": array " + m.name + " got " + std::to_string(m.size) + " bytes, not " +
                        std::to_string(m.expected));
        if (m.size >= zip_limit || offset >= zip_limit)
            throw UsageError(path + ": the arrays pass 4 GiB, which this writer does not support; write JSON Lines "
                                    "or fewer queries per file");
        const std::string h = local_header(m);
        if (std::fseek(file, static_cast<long>(m.header_offset), SEEK_SET) != 0 || std::fwrite(h.data(), 1, h.size(), file) != h.size() ||
            std::fseek(file, 0, SEEK_END) != 0)
            throw Error(temp + ": cannot write: " + std::strerror(errno));
        open_member = false;
    }
    void central_directory() {
        const std::uint64_t start = offset;
        for (const Member& m : members) {
            std::string c;
            put32(c, 0x02014b50);
            put16(c, 20);
            put16(c, 20);
            put16(c, 0);
            put16(c, 0);
            put16(c, 0);
            put16(c, 0x21);
            put32(c, m.crc);
            put32(c, static_cast<std::uint32_t>(m.size));
            put32(c, static_cast<std::uint32_t>(m.size));
            put16(c, static_cast<std::uint32_t>(m.name.size()));
            put16(c, 0);  // extra
            put16(c, 0);  // comment
            put16(c, 0);  // disk
            put16(c, 0);  // internal attributes
            put32(c, 0);  // external attributes
            put32(c, static_cast<std::uint32_t>(m.header_offset));
            c += m.name;
            raw(c.data(), c.size());
        }
        if (offset >= zip_limit) throw UsageError(path + ": the archive passes 4 GiB, which this writer does not support");
        std::string e;
        put32(e, 0x06054b50);
        put16(e, 0);
        put16(e, 0);
        put16(e, static_cast<std::uint32_t>(members.size()));
        put16(e, static_cast<std::uint32_t>(members.size()));
        put32(e, static_cast<std::uint32_t>(offset - start));
        put32(e, static_cast<std::uint32_t>(start));
        put16(e, 0);
        raw(e.data(), e.size());
    }
};

NpzWriter::NpzWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path;
    impl_->temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    impl_->file = std::fopen(impl_->temp.c_str(), "wb");
    if (!impl_->file) throw Error(path + ": cannot write beside it: " + std::strerror(errno));
}

NpzWriter::~NpzWriter() {
    if (impl_->file) {
        std::fclose(impl_->file);
        std::remove(impl_->temp.c_str());
    }
}

void NpzWriter::begin_array(const std::string& name, const std::string& descr, const std::vector<std::size_t>& shape,
                            std::size_t item_bytes) {
    impl_->end_member();
    Member m;
    m.name = name + ".npy";
    m.header_offset = impl_->offset;
    const std::string header = npy_header(descr, shape);
    std::uint64_t items = 1;
    for (std::size_t d : shape) items *= d;
    m.expected = header.size() + items * item_bytes;
    impl_->members.push_back(m);
    impl_->open_member = true;
    const std::string placeholder = impl_->local_header(impl_->members.back());
    impl_->raw(placeholder.data(), placeholder.size());
    impl_->data(header.data(), header.size());
}

void NpzWriter::write(const void* data, std::size_t n_bytes) {
    if (!impl_->open_member) throw Error("NpzWriter::write before begin_array");
    impl_->data(data, n_bytes);
}

void NpzWriter::commit() {
    impl_->end_member();
    impl_->central_directory();
    std::FILE* file = impl_->file;
    impl_->file = nullptr;
    const bool flushed = std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
    const bool closed = std::fclose(file) == 0;
    if (!flushed || !closed) {
        std::remove(impl_->temp.c_str());
        throw Error(impl_->path + ": cannot write: " + std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::rename(impl_->temp, impl_->path, ec);
    if (ec) {
        std::remove(impl_->temp.c_str());
        throw Error(impl_->path + ": cannot rename the finished file into place: " + ec.message());
    }
}

std::size_t utf8_length(const std::string& text) {
    std::size_t n = 0;
    for (const char c : text) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    return n;
}

void append_utf32_item(std::vector<char>& out, const std::string& text, std::size_t width) {
    if (utf8_length(text) > width)
        throw UsageError("text '" + text.substr(0, 80) + "' is longer than " + std::to_string(width) + " characters");
    std::size_t written = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const std::size_t len = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
        std::uint32_t cp = len == 1 ? lead : lead & (0x7f >> len);
        for (std::size_t j = 1; j < len && i + j < text.size(); ++j)
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + j]) & 0x3f);
        i += len;
        for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((cp >> (8 * b)) & 0xff));
        ++written;
    }
    out.insert(out.end(), (width - written) * 4, '\0');
}

}  // namespace novelty
