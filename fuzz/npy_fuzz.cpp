// Fuzzes the .npy reader: the header parser, the shape and size checks, and reading every row
// of what it accepts. Every input must open and read whole, or end in InputError.
#include "memory_file.hpp"
#include "novelty/util/error.hpp"
#include "novelty/io/npy.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static novelty::fuzz::MemoryFile file;
    const std::string path = file.hold(data, size);
    try {
        const novelty::NpyMatrix m = novelty::NpyMatrix::open(path);
        if (m.ndim() != 1 && m.ndim() != 2) __builtin_trap();
        const std::size_t element = novelty::element_size(m.dtype());
        if (m.cols() != 0 && m.rows() > size / element / m.cols()) __builtin_trap();  // more data than the file holds
        std::vector<float> row(m.cols());
        double sum = 0;
        for (std::size_t r = 0; r < m.rows(); ++r) {
            m.row_as_f32(r, row.data());
            for (float v : row) sum += std::isfinite(v) ? v : 0.0;
        }
        if (std::isnan(sum)) __builtin_trap();
    } catch (const novelty::InputError&) {
    }
    return 0;
}
