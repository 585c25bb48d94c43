#include "device/emulated/emulated_memory.hpp"

#include <cstdlib>
#include <new>
#include <string>

#include "novelty/util/error.hpp"

namespace novelty::dev::emulated {

void* Memory::allocate(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > limit_ - used_)
        throw Error("emulated device: out of memory: " + std::to_string(bytes) + " bytes asked with " +
                    std::to_string(used_) + " of " + std::to_string(limit_) +
                    " in use; give the emulated device more with NOVELTY_EMULATED_DEVICE_MIB (now " +
                    std::to_string(limit_ >> 20) + "), or less work with --device-memory");
    // 256-byte alignment, as cudaMalloc gives (the kernels' vector loads rely on 16).
    const std::size_t rounded = ((bytes == 0 ? 1 : bytes) + 255) / 256 * 256;
    void* ptr = std::aligned_alloc(256, rounded);
    if (ptr == nullptr) throw std::bad_alloc();
    blocks_[reinterpret_cast<std::uintptr_t>(ptr)] = bytes;
    used_ += bytes;
    return ptr;
}

void Memory::release(void* ptr) noexcept {
    if (ptr == nullptr) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto at = blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (at == blocks_.end()) return;
    used_ -= at->second;
    blocks_.erase(at);
    std::free(ptr);
}

void Memory::check(const void* ptr, std::size_t bytes, const char* what) const {
    if (bytes == 0) return;
    const auto address = reinterpret_cast<std::uintptr_t>(ptr);
    const std::lock_guard<std::mutex> lock(mutex_);
    auto at = blocks_.upper_bound(address);
    if (at != blocks_.begin()) {
        --at;
        if (address >= at->first && address - at->first + bytes <= at->second) return;
    }
    throw Error(std::string("emulated device: ") + what + " (" + std::to_string(bytes) +
                " bytes) is not inside one device allocation");
}

std::size_t Memory::used() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return used_;
}

}  // namespace novelty::dev::emulated
