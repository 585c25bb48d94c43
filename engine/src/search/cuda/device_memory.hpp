// Owners for CUDA resources used by the backend glue: device buffers, pinned host buffers,
// streams and events, each released on scope exit. Internal to engine/src/search/cuda (CUDA builds
// only). Every CUDA call is checked and a failure throws novelty::Error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "novelty/util/error.hpp"
#include "cuda_check.cuh"

namespace novelty::cuda {

/// Device memory of a fixed size (0 bytes = no allocation). Movable, not copyable.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes > 0) NOVELTY_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            release();
            ptr_ = std::exchange(other.ptr_, nullptr);
            bytes_ = std::exchange(other.bytes_, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    template <typename T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    void* get() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    void release() {
        if (ptr_ != nullptr) cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Page-locked host memory, so that copies to the device run asynchronously.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
        if (bytes > 0) NOVELTY_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
    }
    ~PinnedBuffer() { release(); }
    PinnedBuffer(PinnedBuffer&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        if (this != &other) {
            release();
            ptr_ = std::exchange(other.ptr_, nullptr);
            bytes_ = std::exchange(other.bytes_, 0);
        }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void* get() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    void release() {
        if (ptr_ != nullptr) cudaFreeHost(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Queues on `stream` the copy of `values` (host memory, need not be pinned) to the start of
/// `buffer`, which must hold at least values.size() * sizeof(T) bytes; an empty vector copies nothing.
template <typename T>
void copy_to_device(const std::vector<T>& values, const DeviceBuffer& buffer, cudaStream_t stream) {
    if (!values.empty())
        NOVELTY_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), values.data(), values.size() * sizeof(T),
                                           cudaMemcpyHostToDevice, stream));
}

/// A non-blocking CUDA stream.
class Stream {
public:
    Stream() { NOVELTY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return stream_; }
    void synchronize() const { NOVELTY_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

private:
    cudaStream_t stream_ = nullptr;
};

/// An event without timing, for ordering work between streams.
class Event {
public:
    Event() { NOVELTY_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
    ~Event() { cudaEventDestroy(event_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record(cudaStream_t stream) { NOVELTY_CUDA_CHECK(cudaEventRecord(event_, stream)); }
    /// Makes `stream` wait for the work recorded so far.
    void wait_on(cudaStream_t stream) const { NOVELTY_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0)); }
    void synchronize() const { NOVELTY_CUDA_CHECK(cudaEventSynchronize(event_)); }

private:
    cudaEvent_t event_ = nullptr;
};

/// Sets the current device for the caller's scope and restores the previous one after.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        NOVELTY_CUDA_CHECK(cudaGetDevice(&previous_));
        NOVELTY_CUDA_CHECK(cudaSetDevice(device));
    }
    ~DeviceScope() { cudaSetDevice(previous_); }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int previous_ = 0;
};

}  // namespace novelty::cuda
