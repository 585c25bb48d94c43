#include "search/cuda/row_upload.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <cstring>

#include "util/parallel_for.hpp"

namespace novelty::cuda {


RowUploader::RowUploader(Device& device, kernels::Element storage, std::size_t staging_bytes)
    : device_(device), storage_(storage), staging_bytes_(staging_bytes),
      pinned_{PinnedBuffer(device, staging_bytes), PinnedBuffer(device, staging_bytes)} {}

void RowUploader::upload(const VectorView& view, std::size_t first, std::size_t n_rows, void* dst,
                         dev::Stream stream) {
    const kernels::Element source = element_of(view.dtype);
    const std::size_t source_row_bytes = view.dim * static_cast<std::size_t>(kernels::element_bytes(source));
    const std::size_t target_row_bytes = view.dim * static_cast<std::size_t>(kernels::element_bytes(storage_));
    const bool convert = source != storage_;
    if (convert && !device_staging_[0].get()) {
        device_staging_[0] = DeviceBuffer(device_, staging_bytes_);
        device_staging_[1] = DeviceBuffer(device_, staging_bytes_);
    }
    const std::size_t piece_rows = std::max<std::size_t>(staging_bytes_ / std::max<std::size_t>(source_row_bytes, 1), 1);
    if (piece_rows * source_row_bytes > staging_bytes_)
        throw Error("RowUploader: one row (" + std::to_string(source_row_bytes) + " bytes) is larger than the staging buffer");
    const auto* source_bytes = static_cast<const unsigned char*>(view.data) + first * source_row_bytes;
    auto* target_bytes = static_cast<unsigned char*>(dst);
    int slot = 0;
    for (std::size_t done = 0; done < n_rows; done += piece_rows, slot ^= 1) {
        const std::size_t n = std::min(piece_rows, n_rows - done);
        // The slot's previous transfer must have finished before the host overwrites it.
        if (slot_used_[slot]) slot_free_[slot].synchronize();
        parallel_copy(pinned_[slot].get(), source_bytes + done * source_row_bytes, n * source_row_bytes);
        void* target = target_bytes + done * target_row_bytes;
        if (!convert) {
            device_.copy(target, pinned_[slot].get(), n * source_row_bytes, dev::Copy::host_to_device, stream);
        } else {
            device_.copy(device_staging_[slot].get(), pinned_[slot].get(), n * source_row_bytes, dev::Copy::host_to_device,
                         stream);
            device_.convert_values(device_staging_[slot].get(), source, target, storage_, n * view.dim, stream);
        }
        slot_free_[slot].record(stream);
        slot_used_[slot] = true;
    }
}

}  // namespace novelty::cuda
