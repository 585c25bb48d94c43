// Copies host rows to the device in chunks, runs kernels/normalize_rows, copies results back.
#include "search/cuda/normalize_rows_cuda.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "search/cuda/device_memory.hpp"
#include "device/device.hpp"
#include "normalize_rows_body.cuh"
#include "novelty/util/error.hpp"

namespace novelty {

namespace {

/// Input bytes per chunk: bounds device memory to about twice this (input + output).
constexpr std::size_t chunk_bytes = std::size_t{256} << 20;

using cuda::DeviceBuffer;
using cuda::Stream;

/// The current CUDA device (the emulated one under NOVELTY_DEVICE=cuda-emulated); Error when
/// there is none.
dev::Device& require_device() {
    dev::Device& device = dev::select_device(false);
    if (device.count() == 0) throw Error("CUDA row normalisation needs a CUDA device, but none is available");
    return device;
}

void check_arguments(const float* rows, std::size_t n_rows, std::size_t dim, const void* out) {
    if (dim != 0 && n_rows > std::numeric_limits<std::size_t>::max() / sizeof(float) / dim) {
        throw UsageError("normalize_rows_cuda: " + std::to_string(n_rows) + " x " +
                         std::to_string(dim) + " rows are too many to address");
    }
    if (n_rows * dim > 0 && (rows == nullptr || out == nullptr)) {
        throw UsageError("normalize_rows_cuda: null rows or output for a non-empty shape");
    }
}

RowProblem to_problem(int status) {
    switch (status) {
        case kernels::row_ok: return RowProblem::none;
        case kernels::row_not_finite: return RowProblem::not_finite;
        case kernels::row_zero_norm: return RowProblem::zero;
    }
    throw Error("normalize_rows_cuda: the kernel wrote an unknown row status " +
                std::to_string(status));
}

constexpr dev::Element out_type(const float*) { return dev::Element::f32; }
constexpr dev::Element out_type(const std::uint16_t*) { return dev::Element::f16; }

/// The shared host loop. For float32 output the kernel works in place on the device buffer.
template <typename Out>
std::vector<RowProblem> normalize_on_device(const float* rows, std::size_t n_rows,
                                            std::size_t dim, Out* out) {
    check_arguments(rows, n_rows, dim, out);
    dev::Device& device = require_device();
    std::vector<RowProblem> problems(n_rows, RowProblem::none);
    if (n_rows == 0) return problems;

    constexpr bool in_place = sizeof(Out) == sizeof(float);
    const std::size_t row_bytes = std::max<std::size_t>(dim * sizeof(float), 1);
    const std::size_t chunk_rows = std::min(n_rows, std::max<std::size_t>(chunk_bytes / row_bytes, 1));

    Stream stream(device);
    DeviceBuffer d_in(device, chunk_rows * dim * sizeof(float));
    DeviceBuffer d_out(device, in_place ? 0 : chunk_rows * dim * sizeof(Out));
    DeviceBuffer d_status(device, chunk_rows * sizeof(int));
    Out* d_out_ptr = in_place ? reinterpret_cast<Out*>(d_in.as<float>()) : d_out.as<Out>();
    std::vector<int> status(chunk_rows);

    for (std::size_t first = 0; first < n_rows; first += chunk_rows) {
        const std::size_t count = std::min(chunk_rows, n_rows - first);
        const std::size_t values = count * dim;
        if (values > 0) {
            device.copy(d_in.as<float>(), rows + first * dim, values * sizeof(float), dev::Copy::host_to_device,
                        stream.get());
        }
        device.normalize_rows(d_in.as<float>(), d_out_ptr, out_type(out), count, dim, d_status.as<int>(), stream.get());
        if (values > 0)
            device.copy(out + first * dim, d_out_ptr, values * sizeof(Out), dev::Copy::device_to_host, stream.get());
        device.copy(status.data(), d_status.as<int>(), count * sizeof(int), dev::Copy::device_to_host, stream.get());
        stream.synchronize();
        for (std::size_t i = 0; i < count; ++i) problems[first + i] = to_problem(status[i]);
    }
    return problems;
}

}  // namespace

std::vector<RowProblem> normalize_rows_cuda(const float* rows, std::size_t n_rows,
                                            std::size_t dim, float* out) {
    return normalize_on_device(rows, n_rows, dim, out);
}

std::vector<RowProblem> normalize_rows_cuda_f16(const float* rows, std::size_t n_rows,
                                                std::size_t dim, std::uint16_t* out) {
    return normalize_on_device(rows, n_rows, dim, out);
}

}  // namespace novelty
