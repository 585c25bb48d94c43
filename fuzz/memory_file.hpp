// A fuzz input as a file the readers open by path: an in-memory file (memfd), rewritten for
// each input and opened through /proc/self/fd, so no disk is touched.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace novelty::fuzz {

class MemoryFile {
public:
    MemoryFile() : fd_(::memfd_create("novelty-fuzz", 0)) {
        if (fd_ < 0) std::abort();
    }
    /// Replaces the content with data[0..size) and returns a path that opens it.
    std::string hold(const std::uint8_t* data, std::size_t size) {
        if (::ftruncate(fd_, 0) != 0) std::abort();
        std::size_t done = 0;
        while (done < size) {
            const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
            if (n <= 0) std::abort();
            done += static_cast<std::size_t>(n);
        }
        return "/proc/self/fd/" + std::to_string(fd_);
    }

private:
    int fd_;
};

}  // namespace novelty::fuzz
