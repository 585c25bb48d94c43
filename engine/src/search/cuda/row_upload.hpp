// Copies host vector rows (float32 or float16, e.g. a memory-mapped vectors.npy) into a device
// matrix of the backend's storage type, through two pinned staging buffers so that the host's
// copy into one overlaps the device transfer (and conversion) of the other. Internal to
// engine/src/search/cuda.
#pragma once

#include <cstddef>

#include "search/cuda/device_memory.hpp"
#include "element_type.cuh"
#include "novelty/search/search.hpp"

namespace novelty::cuda {

/// The kernels' mirror of the engine's element type (the kernels include no engine header): the
/// same enumerators with the same values, checked here.
constexpr kernels::Element element_of(ElementType type) { return static_cast<kernels::Element>(static_cast<int>(type)); }
static_assert(element_of(ElementType::f32) == kernels::Element::f32);
static_assert(element_of(ElementType::f16) == kernels::Element::f16);
static_assert(element_of(ElementType::bf16) == kernels::Element::bf16);

class RowUploader {
public:
    /// `storage`: the device element type written. `staging_bytes`: the size of each of the two
    /// pinned (and, when converting, device) staging buffers.
    RowUploader(Device& device, kernels::Element storage, std::size_t staging_bytes);

    /// Queues the copy of rows [first, first + n_rows) of `view` into `dst` (n_rows x view.dim
    /// values of the storage type, device memory) on `stream`. Returns once the host has read
    /// every source row; the device work may still be running (order later work on `stream`,
    /// or record an event on it).
    void upload(const VectorView& view, std::size_t first, std::size_t n_rows, void* dst, dev::Stream stream);

private:
    Device& device_;
    kernels::Element storage_;
    std::size_t staging_bytes_;
    PinnedBuffer pinned_[2];
    DeviceBuffer device_staging_[2];
    Event slot_free_[2] = {Event(device_), Event(device_)};
    bool slot_used_[2] = {false, false};
};

}  // namespace novelty::cuda
