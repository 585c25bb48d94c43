#include "file_util.hpp"

#include "novelty/error.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace novelty {

std::string temp_sibling(const std::string& path) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rng() % 1000000000);
}

void fsync_path(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw Error(path + ": cannot open to sync: " + std::strerror(errno));
    const int rc = ::fsync(fd);
    const int saved = errno;
    ::close(fd);
    if (rc != 0 && saved != EINVAL) throw Error(path + ": fsync failed: " + std::strerror(saved));
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
    const std::string tmp = temp_sibling(path);
    FILE* file = std::fopen(tmp.c_str(), "wb");
    if (!file) throw Error(path + ": cannot write: " + std::strerror(errno));
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size() && std::fflush(file) == 0 &&
                    ::fsync(::fileno(file)) == 0;
    const int saved = errno;
    std::fclose(file);
    if (!ok) {
        std::remove(tmp.c_str());
        throw Error(path + ": write failed: " + std::strerror(saved));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        throw Error(path + ": cannot rename into place: " + std::strerror(err));
    }
    auto parent = std::filesystem::path(path).parent_path();
    fsync_path(parent.empty() ? "." : parent.string());
}

std::string utc_now_iso8601() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

}  // namespace novelty
