// Tests for novelty/io/npy.hpp against fixtures written by numpy (tests/fixtures/npy/make_fixtures.py).
#include "novelty/io/npy.hpp"

#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace novelty {
namespace {

using test::fixture;
using test::read_file;
using test::TempDir;
using test::write_file;

struct Expected {
    std::size_t rows = 0, cols = 0;
    std::vector<std::uint32_t> bits;  // one per element, C order, in the file's dtype
};

/// expected.txt: "<name> <rows> <cols> <hex bits...>" per line.
const std::map<std::string, Expected>& expected_values() {
    static const std::map<std::string, Expected> table = [] {
        std::map<std::string, Expected> out;
        std::istringstream lines(read_file(fixture("npy/expected.txt")));
        std::string line;
        while (std::getline(lines, line)) {
            std::istringstream fields(line);
            std::string name, hex;
            Expected e;
            if (!(fields >> name >> e.rows >> e.cols)) continue;
            while (fields >> hex) e.bits.push_back(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16)));
            out[name] = e;
        }
        return out;
    }();
    return table;
}

std::uint32_t f32_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

std::vector<std::string> dir_entries(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

/// A hand-made .npy file: magic, version, little-endian header length, `dict` and then `data`.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const std::size_t len = dict.size();
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
    return out + dict + data;
}

std::string f32_data(const std::vector<float>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST(Npy, DTypeNamesAndSizes) {
    EXPECT_STREQ(element_name(DType::f32), "f32");
    EXPECT_STREQ(element_name(DType::f16), "f16");
    EXPECT_EQ(element_size(DType::f32), 4u);
    EXPECT_EQ(element_size(DType::f16), 2u);
}

TEST(Npy, ReadsGoodF32FixturesElementByElement) {
    struct Case {
        const char* name;
        int ndim;
    };
    for (const Case& c : {Case{"good_f32_5x7.npy", 2}, Case{"good_f32_1d.npy", 1}, Case{"good_f32_0x4.npy", 2},
                          Case{"good_f32_v2.npy", 2}, Case{"good_f32_v3.npy", 2}}) {
        SCOPED_TRACE(c.name);
        const Expected& e = expected_values().at(c.name);
        const NpyMatrix m = NpyMatrix::open(fixture(std::string("npy/") + c.name));
        EXPECT_EQ(m.path(), fixture(std::string("npy/") + c.name));
        EXPECT_EQ(m.dtype(), DType::f32);
        EXPECT_EQ(m.ndim(), c.ndim);
        ASSERT_EQ(m.rows(), e.rows);
        ASSERT_EQ(m.cols(), e.cols);
        ASSERT_EQ(e.bits.size(), e.rows * e.cols);
        const auto* data = static_cast<const float*>(m.data());
        std::vector<float> row(m.cols());
        for (std::size_t r = 0; r < m.rows(); ++r) {
            m.row_as_f32(r, row.data());
            for (std::size_t k = 0; k < m.cols(); ++k) {
                EXPECT_EQ(f32_bits(data[r * m.cols() + k]), e.bits[r * m.cols() + k]) << r << "," << k;
                EXPECT_EQ(f32_bits(row[k]), e.bits[r * m.cols() + k]) << r << "," << k;
            }
        }
    }
}

TEST(Npy, ReadsF16FixtureAndConvertsRowsToF32) {
    const Expected& e = expected_values().at("good_f16_4x6.npy");
    const Expected& e32 = expected_values().at("good_f16_4x6.npy#f32");
    const NpyMatrix m = NpyMatrix::open(fixture("npy/good_f16_4x6.npy"));
    EXPECT_EQ(m.dtype(), DType::f16);
    EXPECT_EQ(m.ndim(), 2);
    ASSERT_EQ(m.rows(), 4u);
    ASSERT_EQ(m.cols(), 6u);
    const auto* data = static_cast<const std::uint16_t*>(m.data());
    std::vector<float> row(6);
    for (std::size_t r = 0; r < 4; ++r) {
        m.row_as_f32(r, row.data());
        for (std::size_t k = 0; k < 6; ++k) {
            EXPECT_EQ(data[r * 6 + k], e.bits[r * 6 + k]) << r << "," << k;
            EXPECT_EQ(f32_bits(row[k]), e32.bits[r * 6 + k]) << r << "," << k;  // numpy's float32
        }
    }
    EXPECT_THROW(m.row_as_f32(4, row.data()), UsageError);
}

TEST(Npy, BadFixturesGiveInputErrorsNamingFileAndProblem) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"bad_big_endian.npy", {"dtype '>f4' (big-endian) is not supported", "'<f4'", "'<f2'"}},
        {"bad_f8.npy", {"dtype '<f8' (float64) is not supported"}},
        {"bad_i4.npy", {"dtype '<i4' (int32) is not supported"}},
        {"bad_fortran.npy", {"fortran_order is True"}},
        {"bad_3d.npy", {"3-dimensional", "(2, 3, 4)"}},
        {"bad_0d.npy", {"0-dimensional", "shape ()"}},
        {"bad_truncated.npy", {"data is truncated", "needs 48 bytes", "has 43"}},
        {"bad_truncated_header.npy", {"truncated header"}},
        {"bad_extra_data.npy", {"trailing data", "needs 48 bytes", "has 52"}},
        {"bad_magic.npy", {"bad magic", "NUMPZ"}},
        {"bad_version.npy", {"unsupported .npy format version 4.0"}},
    };
    for (const auto& [name, phrases] : cases) {
        SCOPED_TRACE(name);
        const std::string path = fixture("npy/" + name);
        try {
            NpyMatrix::open(path);
            ADD_FAILURE() << "no exception";
        } catch (const InputError& e) {
            EXPECT_EQ(e.file(), path);
            EXPECT_EQ(e.line(), 0u);
            const std::string what = e.what();
            EXPECT_NE(what.find(path), std::string::npos) << what;
            for (const std::string& phrase : phrases) EXPECT_NE(what.find(phrase), std::string::npos) << what;
        }
    }
}

TEST(Npy, MissingAndEmptyFiles) {
    TempDir dir;
    EXPECT_THROW(NpyMatrix::open(dir.file("nope.npy")), InputError);
    write_file(dir.file("empty.npy"), "");
    try {
        NpyMatrix::open(dir.file("empty.npy"));
        ADD_FAILURE() << "no exception";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
    }
    EXPECT_THROW(NpyMatrix::open(dir.path().string()), InputError);  // a directory
}

TEST(Npy, HeaderDictionaryParsingIsLenient) {
    TempDir dir;
    const std::string data = f32_data({1, 2, 3, 4, 5, 6});
    const std::vector<std::string> dicts = {
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}\n",
        "{'fortran_order':False,'shape':(2,3),'descr':'<f4',}",
        "{ \"descr\" : \"<f4\" ,\t'shape' : ( 2 , 3 , ) , 'fortran_order' : False }   \n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }       \n",  // Python 2
    };
    for (const std::string& dict : dicts) {
        SCOPED_TRACE(dict);
        for (int major : {1, 2, 3}) {
            write_file(dir.file("a.npy"), make_npy(dict, data, major));  // offsets not aligned
            const NpyMatrix m = NpyMatrix::open(dir.file("a.npy"));
            ASSERT_EQ(m.rows(), 2u);
            ASSERT_EQ(m.cols(), 3u);
            std::vector<float> row(3);
            m.row_as_f32(1, row.data());
            EXPECT_EQ(row, (std::vector<float>{4, 5, 6}));
            EXPECT_EQ(static_cast<const float*>(m.data())[2], 3.0f);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.data()) % alignof(float), 0u);
        }
    }
    // A 1-D file of length n is n x 1; (0,) is 0 x 1.
    write_file(dir.file("b.npy"), make_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (0,), }", ""));
    const NpyMatrix empty = NpyMatrix::open(dir.file("b.npy"));
    EXPECT_EQ(empty.rows(), 0u);
    EXPECT_EQ(empty.cols(), 1u);
    EXPECT_EQ(empty.ndim(), 1);
    EXPECT_EQ(empty.dtype(), DType::f16);
}

TEST(Npy, MalformedHeadersAreInputErrors) {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}", "unexpected key 'x'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 4}", "'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 'a')}", "non-integer"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 1)}", "not True or False"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "structured dtypes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)} x", "unexpected text"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (1, 1)}", "expected '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 1)}", "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "too large"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}", "duplicate key"},
        {"", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100, '(') + "}", "too deep"},
    };
    for (const auto& [dict, phrase] : cases) {
        SCOPED_TRACE(dict);
        write_file(dir.file("m.npy"), make_npy(dict, f32_data({0})));
        try {
            NpyMatrix::open(dir.file("m.npy"));
            ADD_FAILURE() << "no exception";
        } catch (const InputError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(dir.file("m.npy")), std::string::npos) << what;
            EXPECT_NE(what.find(phrase), std::string::npos) << what;
        }
    }
}

TEST(Npy, UnsupportedDtypesAreNamed) {
    TempDir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {">f2", "(big-endian)"}, {"=f4", "(no explicit byte order)"}, {"|f2", "(no explicit byte order)"},
        {"<u1", "(uint8)"},      {"|b1", "(bool)"},                   {"<c8", "(complex64)"},
        {"<f16", "(float128)"},  {"<U5", "(string)"},                 {"|O", "(Python objects)"},
        {"<f999999999", "(float)"}};
    for (const auto& [descr, phrase] : cases) {
        SCOPED_TRACE(descr);
        write_file(dir.file("d.npy"),
                   make_npy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (0, 1), }", ""));
        try {
            NpyMatrix::open(dir.file("d.npy"));
            ADD_FAILURE() << "no exception";
        } catch (const InputError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("dtype '" + descr + "' " + phrase + " is not supported"), std::string::npos)
                << what;
        }
    }
}

TEST(Npy, MatrixIsMovable) {
    NpyMatrix a = NpyMatrix::open(fixture("npy/good_f32_v3.npy"));
    NpyMatrix b = std::move(a);
    EXPECT_EQ(b.rows(), 2u);
    a = NpyMatrix::open(fixture("npy/good_f32_1d.npy"));
    b = std::move(a);
    EXPECT_EQ(b.rows(), 9u);
    EXPECT_EQ(static_cast<const float*>(b.data())[6], -8.5f);
}

TEST(Npy, WriteNpyIsByteIdenticalToNumpy) {
    TempDir dir;
    for (const char* name : {"good_f32_5x7.npy", "good_f16_4x6.npy", "good_f32_0x4.npy"}) {
        SCOPED_TRACE(name);
        const std::string original = fixture(std::string("npy/") + name);
        const NpyMatrix m = NpyMatrix::open(original);
        write_npy(dir.file(name), m.dtype(), m.rows(), m.cols(), m.data());
        EXPECT_EQ(read_file(dir.file(name)), read_file(original));
    }
    EXPECT_EQ(dir_entries(dir.path()),
              (std::vector<std::string>{"good_f16_4x6.npy", "good_f32_0x4.npy", "good_f32_5x7.npy"}));
}

TEST(Npy, WriteNpyHeaderIsAlignedForAnyShape) {
    TempDir dir;
    const std::string path = dir.file("x.npy");
    const float value = 2.5f;
    const std::vector<std::pair<std::size_t, std::size_t>> shapes = {
        {0, 0}, {1, 1}, {0, std::size_t{1} << 40}, {123456789012345678, 0}, {SIZE_MAX, 0}};
    for (const auto& [rows, cols] : shapes) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
        write_npy(path, DType::f16, rows, cols, rows * cols != 0 ? &value : nullptr);
        const std::string bytes = read_file(path);
        const std::size_t header = bytes.size() - rows * cols * 2;
        EXPECT_EQ(header, 128u);  // numpy leaves room for 21 digits of rows: always 128 here
        EXPECT_EQ(bytes[header - 1], '\n');
        const std::string shape = "'shape': (" + std::to_string(rows) + ", " + std::to_string(cols) + "), }";
        EXPECT_NE(bytes.find("{'descr': '<f2', 'fortran_order': False, " + shape), std::string::npos);
        const NpyMatrix m = NpyMatrix::open(path);
        EXPECT_EQ(m.rows(), rows);
        EXPECT_EQ(m.cols(), cols);
    }
    EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"x.npy"}));
}

TEST(Npy, WriteNpyReplacesExistingFileAtomically) {
    TempDir dir;
    const std::string path = dir.file("out.npy");
    write_file(path, "old contents");
    const std::vector<float> values = {1.5f, -2.0f, 0.25f, 8.0f};
    write_npy(path, DType::f32, 2, 2, values.data());
    const NpyMatrix m = NpyMatrix::open(path);
    ASSERT_EQ(m.rows(), 2u);
    EXPECT_EQ(static_cast<const float*>(m.data())[3], 8.0f);
    EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"out.npy"}));
}

TEST(Npy, WriteNpyFailuresAreErrors) {
    TempDir dir;
    const float value = 1.0f;
    EXPECT_THROW(write_npy(dir.file("missing/out.npy"), DType::f32, 1, 1, &value), Error);
    EXPECT_THROW(write_npy(dir.file("null.npy"), DType::f32, 1, 1, nullptr), UsageError);
    EXPECT_TRUE(dir_entries(dir.path()).empty());
}

TEST(Npy, WriterStreamsRowsRoundTrip) {
    TempDir dir;
    const std::size_t cols = 5, rows = 70000;  // 1.4 MB: more than one internal buffer
    std::vector<float> values(rows * cols);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.37f - 1000.0f;
    for (DType dtype : {DType::f32, DType::f16}) {
        SCOPED_TRACE(element_name(dtype));
        const std::string path = dir.file(std::string("s_") + element_name(dtype) + ".npy");
        NpyWriter w(path, dtype, cols);
        EXPECT_EQ(w.cols(), cols);
        std::size_t done = 0;
        for (std::size_t batch = 1; done < rows; batch = batch * 3 + 1) {
            const std::size_t n = std::min(batch, rows - done);
            w.append_f32(values.data() + done * cols, n);
            done += n;
            EXPECT_EQ(w.rows_written(), done);
        }
        w.append_f32(nullptr, 0);
        EXPECT_FALSE(std::filesystem::exists(path));  // nothing at the final path before finish()
        w.finish();
        EXPECT_THROW(w.finish(), UsageError);
        EXPECT_THROW(w.append_f32(values.data(), 1), UsageError);

        const NpyMatrix m = NpyMatrix::open(path);
        ASSERT_EQ(m.dtype(), dtype);
        ASSERT_EQ(m.rows(), rows);
        ASSERT_EQ(m.cols(), cols);
        std::vector<float> row(cols);
        for (std::size_t r = 0; r < rows; ++r) {
            m.row_as_f32(r, row.data());
            for (std::size_t k = 0; k < cols; ++k) {
                const float v = values[r * cols + k];
                const float want = dtype == DType::f32 ? v : half_to_float(float_to_half(v));
                ASSERT_EQ(f32_bits(row[k]), f32_bits(want)) << r << "," << k;
            }
        }
        if (dtype == DType::f32) {  // same bytes as the one-shot writer
            write_npy(dir.file("oneshot.npy"), DType::f32, rows, cols, values.data());
            EXPECT_EQ(read_file(path), read_file(dir.file("oneshot.npy")));
            std::filesystem::remove(dir.file("oneshot.npy"));
        }
    }
    EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"s_f16.npy", "s_f32.npy"}));
}

TEST(Npy, WriterWithZeroRowsMatchesNumpy) {
    TempDir dir;
    NpyWriter w(dir.file("z.npy"), DType::f32, 4);
    w.finish();
    EXPECT_EQ(w.rows_written(), 0u);
    EXPECT_EQ(read_file(dir.file("z.npy")), read_file(fixture("npy/good_f32_0x4.npy")));
}

TEST(Npy, WriterWithoutFinishLeavesNothing) {
    TempDir dir;
    {
        NpyWriter w(dir.file("never.npy"), DType::f16, 3);
        const std::vector<float> row = {1, 2, 3};
        w.append_f32(row.data(), 1);
        EXPECT_EQ(dir_entries(dir.path()).size(), 1u);  // the temporary file
    }
    EXPECT_TRUE(dir_entries(dir.path()).empty());

    write_file(dir.file("keep.npy"), "previous");  // an existing target stays untouched
    { NpyWriter w(dir.file("keep.npy"), DType::f32, 2); }
    EXPECT_EQ(read_file(dir.file("keep.npy")), "previous");
    EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"keep.npy"}));
}

TEST(Npy, WriterInMissingDirectoryThrows) {
    TempDir dir;
    EXPECT_THROW(NpyWriter(dir.file("no/such/dir.npy"), DType::f32, 2), Error);
}

}  // namespace
}  // namespace novelty
