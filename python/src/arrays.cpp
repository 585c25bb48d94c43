// numpy arrays in and out: query matrices read in place when they are float32 and C-contiguous,
// results handed to numpy without a copy (the array owns the engine's vector).
#include "bindings.hpp"

#include "novelty/util/error.hpp"
#include "novelty/util/half.hpp"

#include <cstdint>

namespace novelty::python {

namespace {

std::atomic<std::size_t> copies{0};
std::atomic<std::uintptr_t> last_pointer{0};

bool is_float(const AnyArray& a, unsigned bits) {
    return a.dtype().code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && a.dtype().bits == bits &&
           a.dtype().lanes == 1;
}

template <typename T>
nb::capsule owner_of(T* values) {
    return nb::capsule(values, [](void* p) noexcept { delete static_cast<T*>(p); });
}

}  // namespace

QueryMatrix query_matrix(const AnyArray& array, std::size_t dim, const std::string& parameter) {
    if (array.ndim() != 1 && array.ndim() != 2)
        throw UsageError(parameter + " must be a 2-D array (n x dim), not " + std::to_string(array.ndim()) + "-D",
                         parameter);
    const bool f32 = is_float(array, 32);
    if (!f32 && !is_float(array, 16))
        throw UsageError(parameter + " must hold float32 or float16 values", parameter);
    QueryMatrix q;
    q.n = array.ndim() == 2 ? array.shape(0) : 1;
    q.dim = array.shape(array.ndim() - 1);
    if (dim != 0 && q.dim != dim)
        throw UsageError(parameter + " has " + std::to_string(q.dim) + " columns but the corpus vectors have " +
                             std::to_string(dim),
                         parameter);
    const std::int64_t col_stride = array.stride(array.ndim() - 1);
    const std::int64_t row_stride = array.ndim() == 2 ? array.stride(0) : static_cast<std::int64_t>(q.dim);
    const bool contiguous = (q.dim <= 1 || col_stride == 1) && (q.n <= 1 || row_stride == static_cast<std::int64_t>(q.dim));
    if (f32 && contiguous) {
        q.data = static_cast<const float*>(array.data());
    } else {
        q.owned.resize(q.n * q.dim);
        const auto* base = static_cast<const std::uint8_t*>(array.data());
        const std::size_t item = f32 ? 4 : 2;
        for (std::size_t i = 0; i < q.n; ++i)
            for (std::size_t j = 0; j < q.dim; ++j) {
                const std::uint8_t* p = base + (static_cast<std::int64_t>(i) * row_stride +
                                                static_cast<std::int64_t>(j) * col_stride) * static_cast<std::int64_t>(item);
                q.owned[i * q.dim + j] = f32 ? *reinterpret_cast<const float*>(p)
                                             : half_to_float(*reinterpret_cast<const std::uint16_t*>(p));
            }
        q.data = q.owned.data();
        copies.fetch_add(1);
    }
    last_pointer.store(reinterpret_cast<std::uintptr_t>(q.data));
    return q;
}

std::size_t query_copies() { return copies.load(); }
std::uintptr_t last_query_pointer() { return last_pointer.load(); }

nb::ndarray<nb::numpy, float> float_array(std::vector<float>&& values, std::size_t rows, std::size_t cols) {
    auto* owned = new std::vector<float>(std::move(values));
    return nb::ndarray<nb::numpy, float>(owned->data(), {rows, cols}, owner_of(owned));
}

nb::ndarray<nb::numpy, std::int64_t> int_array(std::vector<std::int64_t>&& values, std::size_t rows, std::size_t cols) {
    auto* owned = new std::vector<std::int64_t>(std::move(values));
    if (cols == 0) return nb::ndarray<nb::numpy, std::int64_t>(owned->data(), {rows}, owner_of(owned));
    return nb::ndarray<nb::numpy, std::int64_t>(owned->data(), {rows, cols}, owner_of(owned));
}

}  // namespace novelty::python
