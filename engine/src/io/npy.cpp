// .npy reading (memory-mapped) and writing (atomic: temp file, fsync, rename). Format reference:
// numpy/lib/format.py. Headers are written byte for byte as numpy 2.x writes them.
#include "novelty/io/npy.hpp"

#include "util/kill_point.hpp"
#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(std::endian::native == std::endian::little, "npy.cpp assumes a little-endian host");

namespace novelty {

const char* element_name(ElementType type) {
    switch (type) {
        case ElementType::f32: return "f32";
        case ElementType::f16: return "f16";
        case ElementType::bf16: return "bf16";
    }
    return "unknown";
}

std::size_t element_size(ElementType type) { return type == ElementType::f32 ? 4 : 2; }

namespace {

constexpr std::string_view k_magic{"\x93NUMPY", 6};
constexpr std::size_t k_align = 64;           // numpy aligns the data to 64 bytes
constexpr std::size_t k_growth_digits = 21;   // numpy pads the header so the row count can grow
const char* const k_expected = "expected little-endian float32 '<f4' or float16 '<f2'";

/// numpy's name of a float32 or float16 array; .npy has no bfloat16, so writing one is refused.
const char* descr_of(DType dtype) {
    if (dtype == DType::bf16) throw UsageError(".npy files hold float32 or float16, not bfloat16");
    return dtype == DType::f16 ? "<f2" : "<f4";
}

std::string errno_text() { return std::strerror(errno); }

// "\x93NUMPZ": bytes shown printable, others as \xNN.
std::string escaped(std::string_view bytes) {
    std::string out;
    char hex[8];
    for (unsigned char c : bytes) {
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        out += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : std::string(hex);
    }
    return out;
}

// --- header parsing: the subset of Python literals numpy writes ------------------------------

struct Value {
    enum Kind { string, name, integer, tuple, list } kind = name;
    std::string text;             // string contents or name (True, False, None)
    std::uint64_t number = 0;     // integer
    std::vector<Value> items;     // tuple or list
};

class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

    /// Parses "{key: value, ...}" (trailing comma optional) followed only by whitespace.
    std::map<std::string, Value> dict() {
        expect('{');
        std::map<std::string, Value> out;
        while (!at('}')) {
            Value key = value();
            if (key.kind != Value::string) fail("a dictionary key is not a string");
            expect(':');
            if (!out.emplace(key.text, value()).second) fail("duplicate key '" + key.text + "'");
            if (!at(',')) break;
            ++pos_;
        }
        expect('}');
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after the dictionary");
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        std::string shown(s_.substr(0, 200));
        while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
        throw InputError(path_, 0, "malformed .npy header: " + what + " at offset " +
                                       std::to_string(pos_) + " in \"" + escaped(shown) + "\"");
    }
    void skip_space() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool at(char c) {
        skip_space();
        return pos_ < s_.size() && s_[pos_] == c;
    }
    void expect(char c) {
        if (!at(c)) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    Value value(int depth = 0) {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end");
        if (depth > 16) fail("nesting too deep");
        Value v;
        const char c = s_[pos_];
        if (c == '\'' || c == '"') {
            v.kind = Value::string;
            for (++pos_; pos_ < s_.size() && s_[pos_] != c; ++pos_) {
                if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
                v.text += s_[pos_];
            }
            expect(c);
        } else if (c == '(' || c == '[') {
            v.kind = c == '(' ? Value::tuple : Value::list;
            const char close = c == '(' ? ')' : ']';
            ++pos_;
            while (!at(close)) {
                v.items.push_back(value(depth + 1));
                if (!at(',')) break;
                ++pos_;
            }
            expect(close);
        } else if (c >= '0' && c <= '9') {
            v.kind = Value::integer;
            for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
                if (__builtin_mul_overflow(v.number, 10u, &v.number) ||
                    __builtin_add_overflow(v.number, static_cast<unsigned>(s_[pos_] - '0'), &v.number))
                    fail("integer too large");
            }
            if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
        } else if (std::isalpha(static_cast<unsigned char>(c))) {
            v.kind = Value::name;
            while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_])))
                v.text += s_[pos_++];
        } else {
            fail(std::string("unexpected character '") + escaped(std::string_view(&c, 1)) + "'");
        }
        return v;
    }

    std::string_view s_;
    const std::string& path_;
    std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::uint64_t>& dims) {
    std::string out = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
    return out + (dims.size() == 1 ? ",)" : ")");
}

// Why a descr other than '<f4'/'<f2' is refused, e.g. "big-endian" or "float64".
std::string describe_descr(const std::string& descr) {
    if (descr.size() < 2) return "unknown";
    if (descr[0] == '>') return "big-endian";
    if (descr[0] != '<' && descr[1] == 'f') return "no explicit byte order";
    std::string bits;  // element size in bits, from the byte count after the kind letter
    if (descr.size() > 2 && descr.size() <= 5 && descr.find_first_not_of("0123456789", 2) == std::string::npos)
        bits = std::to_string(std::stoi(descr.substr(2)) * 8);
    const std::map<char, std::string> kinds = {
        {'f', "float" + bits}, {'i', "int" + bits}, {'u', "uint" + bits}, {'c', "complex" + bits},
        {'b', "bool"}, {'U', "string"}, {'S', "bytes"}, {'O', "Python objects"}};
    const auto it = kinds.find(descr[1]);
    return it == kinds.end() ? "unknown" : it->second;
}

// --- writing ---------------------------------------------------------------------------------

/// The full header numpy writes for a C-ordered rows x cols array: magic, version, length and
/// the padded dictionary, a multiple of 64 bytes long. Its length does not depend on `rows`.
std::string npy_header(DType dtype, std::size_t rows, std::size_t cols) {
    const std::string row_text = std::to_string(rows);
    std::string dict = std::string("{'descr': '") + descr_of(dtype) +
                       "', 'fortran_order': False, 'shape': (" + row_text + ", " +
                       std::to_string(cols) + "), }";
    dict.append(k_growth_digits - row_text.size(), ' ');
    const std::size_t text_len = dict.size() + 1;  // + '\n'
    const bool v2 = text_len + k_align - (10 + text_len) % k_align > 65535;  // as numpy: 1.0 if it fits
    const std::size_t prefix = v2 ? 12 : 10;
    const std::size_t pad = k_align - (prefix + text_len) % k_align;  // 1 .. 64, as numpy
    const std::uint32_t header_len = static_cast<std::uint32_t>(text_len + pad);
    std::string out(k_magic);
    out += static_cast<char>(v2 ? 2 : 1);
    out += '\0';
    for (std::size_t i = 0; i < prefix - 8; ++i)
        out += static_cast<char>((header_len >> (8 * i)) & 0xff);
    out += dict;
    out.append(pad, ' ');
    return out + '\n';
}

/// A temporary file next to `path`, renamed onto it by commit(), removed otherwise.
class TempFile {
public:
    explicit TempFile(const std::string& path) : path_(path) {
        std::random_device rd;
        for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
            temp_ = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
            fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd_ < 0 && errno != EEXIST) break;
        }
        if (fd_ < 0) throw Error("cannot create a temporary file for " + path + ": " + errno_text());
    }
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(temp_.c_str());
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    /// Writes all `size` bytes at `offset`, or at the end when offset < 0.
    void write(const void* data, std::size_t size, off_t offset = -1) {
        const char* p = static_cast<const char*>(data);
        while (size > 0) {
            const ssize_t n = offset < 0 ? ::write(fd_, p, size) : ::pwrite(fd_, p, size, offset);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw Error("cannot write " + temp_ + ": " + (n < 0 ? errno_text() : "no progress"));
            p += n;
            size -= static_cast<std::size_t>(n);
            if (offset >= 0) offset += n;
        }
        kill_point(kill_step_for("write", path_));
    }
    /// fsync, close, rename onto the final path, then fsync the directory (best effort).
    void commit() {
        if (::fsync(fd_) != 0) throw Error("cannot sync " + temp_ + ": " + errno_text());
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw Error("cannot close " + temp_ + ": " + errno_text());
        kill_point(kill_step_for("rename", path_));
        if (::rename(temp_.c_str(), path_.c_str()) != 0)
            throw Error("cannot rename " + temp_ + " to " + path_ + ": " + errno_text());
        committed_ = true;
        const std::size_t slash = path_.rfind('/');
        const std::string dir =
            slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
        const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            ::fsync(dfd);
            ::close(dfd);
        }
    }

private:
    std::string path_, temp_;
    int fd_ = -1;
    bool committed_ = false;
};

std::size_t checked_bytes(std::size_t rows, std::size_t cols, DType dtype) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(rows, cols, &n) || __builtin_mul_overflow(n, element_size(dtype), &n))
        throw UsageError("array of " + std::to_string(rows) + " x " + std::to_string(cols) +
                         " is too large");
    return n;
}

}  // namespace

// --- NpyMatrix ---------------------------------------------------------------------------------

struct NpyMatrix::Impl {
    std::string path;
    DType dtype = DType::f32;
    std::size_t rows = 0, cols = 0;
    int ndim = 2;
    void* map = nullptr;
    std::size_t map_size = 0;
    std::vector<std::uint32_t> copy;  // used only when the data offset is misaligned
    const void* data = nullptr;
    ~Impl() {
        if (map != nullptr) ::munmap(map, map_size);
    }
};

NpyMatrix::NpyMatrix(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NpyMatrix::NpyMatrix(NpyMatrix&&) noexcept = default;
NpyMatrix& NpyMatrix::operator=(NpyMatrix&&) noexcept = default;
NpyMatrix::~NpyMatrix() = default;

namespace {

/// What the header dictionary of a .npy file says: a supported dtype, C order, 1 or 2 dims.
struct NpyHeader {
    DType dtype = DType::f32;
    std::vector<std::uint64_t> dims;
    std::string descr;
};

/// Parses and checks the header dictionary `text` of the .npy file `path` (InputError naming
/// what is wrong).
NpyHeader parse_npy_header(std::string_view text, const std::string& path) {
    auto fail = [&](const std::string& problem) { return InputError(path, 0, problem); };
    NpyHeader out;
    auto dict = HeaderParser(text, path).dict();
    for (const char* key : {"descr", "fortran_order", "shape"})
        if (!dict.count(key)) throw fail(std::string("malformed .npy header: no '") + key + "' key");
    for (const auto& [key, value] : dict)
        if (key != "descr" && key != "fortran_order" && key != "shape")
            throw fail("malformed .npy header: unexpected key '" + escaped(key) + "'");
    const Value& descr = dict["descr"];
    if (descr.kind == Value::list)
        throw fail(std::string("structured dtypes are not supported; ") + k_expected);
    if (descr.kind != Value::string) throw fail("malformed .npy header: 'descr' is not a string");
    if (descr.text == "<f4") out.dtype = DType::f32;
    else if (descr.text == "<f2") out.dtype = DType::f16;
    else throw fail("dtype '" + escaped(descr.text) + "' (" + describe_descr(descr.text) +
                    ") is not supported; " + k_expected);
    const Value& order = dict["fortran_order"];
    if (order.kind != Value::name || (order.text != "True" && order.text != "False"))
        throw fail("malformed .npy header: 'fortran_order' is not True or False");
    if (order.text == "True")
        throw fail("fortran_order is True (column-major data), which is not supported; "
                   "save a C-ordered array");
    const Value& shape = dict["shape"];
    if (shape.kind != Value::tuple) throw fail("malformed .npy header: 'shape' is not a tuple");
    for (const Value& d : shape.items) {
        if (d.kind != Value::integer) throw fail("malformed .npy header: 'shape' holds a non-integer");
        out.dims.push_back(d.number);
    }
    if (out.dims.empty() || out.dims.size() > 2)
        throw fail(std::to_string(out.dims.size()) + "-dimensional array (shape " + shape_text(out.dims) +
                   ") is not supported; expected 1 or 2 dimensions");
    out.descr = descr.text;
    return out;
}

}  // namespace

NpyMatrix NpyMatrix::open(const std::string& path) {
    auto fail = [&](const std::string& problem) { return InputError(path, 0, problem); };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw fail("cannot open: " + errno_text());
    struct stat st {};
    const bool stat_ok = ::fstat(fd, &st) == 0;
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    if (stat_ok && S_ISREG(st.st_mode) && st.st_size > 0) {
        impl->map_size = static_cast<std::size_t>(st.st_size);
        impl->map = ::mmap(nullptr, impl->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (impl->map == MAP_FAILED) impl->map = nullptr;
    }
    const int saved_errno = errno;
    ::close(fd);
    if (!stat_ok || (impl->map == nullptr && impl->map_size > 0)) {
        errno = saved_errno;
        throw Error("cannot map " + path + ": " + errno_text());
    }
    if (!S_ISREG(st.st_mode)) throw fail("not a regular file");

    const std::string_view file(static_cast<const char*>(impl->map), impl->map_size);
    if (file.empty()) throw fail("not a .npy file: the file is empty");
    if (file.substr(0, k_magic.size()) != k_magic)
        throw fail("not a .npy file: bad magic string \"" + escaped(file.substr(0, 6)) +
                   "\" (expected \"\\x93NUMPY\")");
    const auto too_short = [&] {
        return fail("truncated header: the file has only " + std::to_string(file.size()) + " bytes");
    };
    if (file.size() < 10) throw too_short();
    const int major = static_cast<unsigned char>(file[6]), minor = static_cast<unsigned char>(file[7]);
    if (minor != 0 || major < 1 || major > 3)
        throw fail("unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
    const std::size_t prefix = major == 1 ? 10 : 12;
    if (file.size() < prefix) throw too_short();
    std::size_t header_len = 0;
    for (std::size_t i = prefix - 1; i >= 8; --i)
        header_len = header_len * 256 + static_cast<unsigned char>(file[i]);
    if (header_len > file.size() - prefix)
        throw fail("truncated header: it should be " + std::to_string(header_len) + " bytes but only " +
                   std::to_string(file.size() - prefix) + " follow the prefix");

    const NpyHeader header = parse_npy_header(file.substr(prefix, header_len), path);
    impl->dtype = header.dtype;
    const std::vector<std::uint64_t>& dims = header.dims;
    const std::string& descr_text = header.descr;
    impl->ndim = static_cast<int>(dims.size());
    impl->rows = dims[0];
    impl->cols = dims.size() == 2 ? dims[1] : 1;

    const std::size_t offset = prefix + header_len, actual = file.size() - offset;
    std::size_t expected = 0;
    if (__builtin_mul_overflow(impl->rows, impl->cols, &expected) ||
        __builtin_mul_overflow(expected, element_size(impl->dtype), &expected))
        throw fail("shape " + shape_text(dims) + " is too large");
    const std::string what = "shape " + shape_text(dims) + " of '" + descr_text + "' needs " +
                             std::to_string(expected) + " bytes after the header";
    if (actual < expected)
        throw fail("data is truncated: " + what + " but the file has " + std::to_string(actual));
    if (actual > expected)
        throw fail("unexpected trailing data: " + what + " but the file has " + std::to_string(actual));
    if (offset % element_size(impl->dtype) == 0) {
        impl->data = file.data() + offset;
    } else {  // never written by numpy, but possible: copy so that data() is aligned
        impl->copy.resize((expected + 3) / 4);
        if (expected > 0) std::memcpy(impl->copy.data(), file.data() + offset, expected);
        impl->data = impl->copy.data();
    }
    return NpyMatrix(std::move(impl));
}

const std::string& NpyMatrix::path() const { return impl_->path; }
DType NpyMatrix::dtype() const { return impl_->dtype; }
std::size_t NpyMatrix::rows() const { return impl_->rows; }
std::size_t NpyMatrix::cols() const { return impl_->cols; }
int NpyMatrix::ndim() const { return impl_->ndim; }
const void* NpyMatrix::data() const { return impl_->data; }

void NpyMatrix::row_as_f32(std::size_t row, float* out) const {
    if (row >= impl_->rows)
        throw UsageError("row " + std::to_string(row) + " out of range for " + impl_->path + " (" +
                         std::to_string(impl_->rows) + " rows)");
    const std::size_t cols = impl_->cols;
    if (impl_->dtype == DType::f32) {
        const float* src = static_cast<const float*>(impl_->data) + row * cols;
        if (cols > 0) std::memcpy(out, src, cols * sizeof(float));
        return;
    }
    const std::uint16_t* src = static_cast<const std::uint16_t*>(impl_->data) + row * cols;
    for (std::size_t c = 0; c < cols; ++c) out[c] = half_to_float(src[c]);
}

// --- writing -------------------------------------------------------------------------------------

void write_npy(const std::string& path, DType dtype, std::size_t rows, std::size_t cols,
               const void* data) {
    const std::size_t bytes = checked_bytes(rows, cols, dtype);
    if (bytes > 0 && data == nullptr) throw UsageError("write_npy: null data for " + path);
    TempFile file(path);
    const std::string header = npy_header(dtype, rows, cols);
    file.write(header.data(), header.size());
    file.write(data, bytes);
    file.commit();
}

struct NpyWriter::Impl {
    Impl(const std::string& path, DType dtype, std::size_t cols)
        : file(path), dtype(dtype), cols(cols) {}
    TempFile file;
    DType dtype;
    std::size_t cols, rows = 0;
    std::string buffer;
    bool finished = false, failed = false;

    void flush() {
        file.write(buffer.data(), buffer.size());
        buffer.clear();
    }
    void check_usable(const char* what) const {
        if (finished) throw UsageError(std::string("NpyWriter::") + what + " after finish()");
        if (failed) throw Error(std::string("NpyWriter::") + what + " after an earlier write failed");
    }
};

NpyWriter::NpyWriter(const std::string& path, DType dtype, std::size_t cols)
    : impl_(std::make_unique<Impl>(path, dtype, cols)) {
    const std::string header = npy_header(dtype, 0, cols);
    impl_->file.write(header.data(), header.size());
}

NpyWriter::~NpyWriter() = default;  // an unfinished temp file is removed by ~TempFile

void NpyWriter::append_f32(const float* rows, std::size_t n_rows) {
    Impl& w = *impl_;
    w.check_usable("append_f32");
    const std::size_t count = checked_bytes(n_rows, w.cols, DType::f32) / sizeof(float);
    if (count > 0 && rows == nullptr) throw UsageError("NpyWriter::append_f32: null rows");
    constexpr std::size_t chunk = std::size_t{1} << 20;
    try {
        for (std::size_t i = 0; i < count;) {
            const std::size_t n = std::min(count - i, chunk / 4);
            if (w.dtype == DType::f32) {
                w.buffer.append(reinterpret_cast<const char*>(rows + i), n * sizeof(float));
            } else {
                for (std::size_t k = 0; k < n; ++k) {
                    const std::uint16_t h = float_to_half(rows[i + k]);
                    w.buffer.append(reinterpret_cast<const char*>(&h), sizeof h);
                }
            }
            i += n;
            if (w.buffer.size() >= chunk) w.flush();
        }
    } catch (...) {
        w.failed = true;
        throw;
    }
    w.rows += n_rows;
}

std::size_t NpyWriter::rows_written() const { return impl_->rows; }
std::size_t NpyWriter::cols() const { return impl_->cols; }

void NpyWriter::finish() {
    Impl& w = *impl_;
    w.check_usable("finish");
    try {
        w.flush();
        // Same length as the placeholder header: numpy's padding leaves room for any row count.
        const std::string header = npy_header(w.dtype, w.rows, w.cols);
        w.file.write(header.data(), header.size(), 0);
        w.file.commit();
    } catch (...) {
        w.failed = true;
        throw;
    }
    w.finished = true;
}

}  // namespace novelty
