// The emulated device's memory (emulated_device.cpp): allocations in host RAM under a limit, and
// the check that a pointer handed to the device lies inside one of them, so that glue which
// passes a host pointer where a device pointer belongs, or a range past an allocation's end,
// fails in the emulator as it would fault on a card. Internal to engine/src/device/emulated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace novelty::dev::emulated {

class Memory {
public:
    /// `limit_bytes`: the device's total memory.
    explicit Memory(std::size_t limit_bytes) : limit_(limit_bytes) {}

    /// Throws novelty::Error "out of memory" (naming the request, what is in use and the limit)
    /// when the allocation would pass the limit. Zero bytes allocates one byte (a unique pointer).
    void* allocate(std::size_t bytes);
    void release(void* ptr) noexcept;
    /// Throws novelty::Error naming `what` unless [ptr, ptr + bytes) lies inside one allocation.
    void check(const void* ptr, std::size_t bytes, const char* what) const;
    std::size_t used() const;
    std::size_t limit() const { return limit_; }

private:
    mutable std::mutex mutex_;
    std::map<std::uintptr_t, std::size_t> blocks_;  ///< start address -> size
    std::size_t used_ = 0;
    std::size_t limit_;
};

}  // namespace novelty::dev::emulated
