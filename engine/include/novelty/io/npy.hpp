// Reading and writing NumPy .npy files: little-endian float32 ('<f4') or float16 ('<f2'),
// C order, one or two dimensions. Anything else is refused with an InputError naming the file.
#pragma once

#include "novelty/util/element_type.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace novelty {

/// Element type of a vector file: float32 or float16 (.npy has no bfloat16; writing one is refused).
using DType = ElementType;

/// A read-only, memory-mapped .npy array of rows x cols elements in C order. A 1-D file of
/// length n opens as n x 1. The mapping lives as long as the object; moving is cheap.
class NpyMatrix {
public:
    /// Maps `path`. Throws InputError (line 0) naming the file for a bad magic string, an
    /// unsupported version, a dtype other than '<f4'/'<f2', fortran_order True, more than two
    /// dimensions, or a file shorter than its header says.
    static NpyMatrix open(const std::string& path);

    NpyMatrix(NpyMatrix&&) noexcept;
    NpyMatrix& operator=(NpyMatrix&&) noexcept;
    ~NpyMatrix();

    const std::string& path() const;
    DType dtype() const;
    std::size_t rows() const;
    std::size_t cols() const;
    /// Number of dimensions in the file (1 or 2).
    int ndim() const;
    /// Pointer to the first element (row-major rows x cols, elements of dtype()).
    const void* data() const;
    /// Copies row `row` (< rows()) into `out` (cols() floats), converting float16 to float32.
    void row_as_f32(std::size_t row, float* out) const;

private:
    struct Impl;
    explicit NpyMatrix(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// Writes rows x cols elements (row-major, dtype) to `path` as a version 1.0 .npy file. The file
/// is written to a temporary name in the same directory and renamed, so `path` is never left
/// half written. Throws Error on any I/O failure.
void write_npy(const std::string& path, DType dtype, std::size_t rows, std::size_t cols,
               const void* data);

/// Streams rows into a .npy file whose row count is known only at the end. Rows go to a
/// temporary file; finish() fixes the header and renames it to the final path. Destroying the
/// writer without finish() removes the temporary file and leaves `path` untouched.
class NpyWriter {
public:
    NpyWriter(const std::string& path, DType dtype, std::size_t cols);
    ~NpyWriter();
    NpyWriter(const NpyWriter&) = delete;
    NpyWriter& operator=(const NpyWriter&) = delete;

    /// Appends n_rows rows of cols() float32 values, converted to the file's dtype.
    void append_f32(const float* rows, std::size_t n_rows);
    std::size_t rows_written() const;
    std::size_t cols() const;
    /// Writes the header and renames the file into place. Call once.
    void finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace novelty
