// Owners for device resources used by the CUDA backend and encoder glue: device buffers, pinned
// host buffers, streams and events, each released on scope exit, all through one dev::Device
// (the real card or the emulated one; engine/src/device/device.hpp). Internal to the engine.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "device/device.hpp"

namespace novelty::cuda {

using dev::Device;

/// Device memory of a fixed size (0 bytes = no allocation). Movable, not copyable.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(Device& device, std::size_t bytes) : device_(&device), bytes_(bytes) {
        if (bytes > 0) ptr_ = device.allocate(bytes);
    }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : device_(other.device_), ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            release();
            device_ = other.device_;
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
        if (ptr_ != nullptr) device_->release(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    Device* device_ = nullptr;
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Page-locked host memory, so that copies to the device run asynchronously.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(Device& device, std::size_t bytes) : device_(&device), bytes_(bytes) {
        if (bytes > 0) ptr_ = device.allocate_pinned(bytes);
    }
    ~PinnedBuffer() { release(); }
    PinnedBuffer(PinnedBuffer&& other) noexcept
        : device_(other.device_), ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        if (this != &other) {
            release();
            device_ = other.device_;
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
        if (ptr_ != nullptr) device_->release_pinned(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    Device* device_ = nullptr;
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

/// Queues on `stream` the copy of `values` (host memory, need not be pinned) to the start of
/// `buffer`, which must hold at least values.size() * sizeof(T) bytes; an empty vector copies nothing.
template <typename T>
void copy_to_device(Device& device, const std::vector<T>& values, const DeviceBuffer& buffer, dev::Stream stream) {
    if (!values.empty())
        device.copy(buffer.get(), values.data(), values.size() * sizeof(T), dev::Copy::host_to_device, stream);
}

/// A non-blocking stream.
class Stream {
public:
    explicit Stream(Device& device) : device_(device), stream_(device.make_stream()) {}
    ~Stream() { device_.destroy(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    dev::Stream get() const { return stream_; }
    void synchronize() const { device_.synchronize(stream_); }

private:
    Device& device_;
    dev::Stream stream_;
};

/// An event (without timing unless asked), for ordering work between streams.
class Event {
public:
    explicit Event(Device& device, bool timing = false) : device_(device), event_(device.make_event(timing)) {}
    ~Event() { device_.destroy(event_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record(dev::Stream stream) { device_.record(event_, stream); }
    /// Makes `stream` wait for the work recorded so far.
    void wait_on(dev::Stream stream) const { device_.wait(stream, event_); }
    void synchronize() const { device_.synchronize(event_); }
    dev::Event get() const { return event_; }

private:
    Device& device_;
    dev::Event event_;
};

/// Sets the current device for the caller's scope and restores the previous one after.
class DeviceScope {
public:
    DeviceScope(Device& device, int index) : device_(device), previous_(device.current()) { device.set_current(index); }
    ~DeviceScope() {
        try {
            device_.set_current(previous_);
        } catch (...) {
        }
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    Device& device_;
    int previous_ = 0;
};

}  // namespace novelty::cuda
