#include "util/file_util.hpp"

#include "util/kill_point.hpp"
#include "novelty/util/error.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <csignal>
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

AtomicFile::AtomicFile(const std::string& path) : path_(path), tmp_(temp_sibling(path)) {
    file_ = std::fopen(tmp_.c_str(), "wb");
    if (!file_) throw Error(path + ": cannot write: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    if (file_) {
        std::fclose(file_);
        std::remove(tmp_.c_str());
    }
}

void AtomicFile::write(const void* data, std::size_t n_bytes) {
    if (!file_) throw Error(path_ + ": write after commit");
    if (n_bytes > 0 && std::fwrite(data, 1, n_bytes, file_) != n_bytes)
        throw Error(path_ + ": write failed: " + std::strerror(errno));
    kill_point(kill_step_for("write", path_));
}

void AtomicFile::commit() {
    if (!file_) throw Error(path_ + ": committed twice");
    const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    const int saved = errno;
    std::fclose(file_);
    file_ = nullptr;
    if (!ok) {
        std::remove(tmp_.c_str());
        throw Error(path_ + ": write failed: " + std::strerror(saved));
    }
    kill_point(kill_step_for("rename", path_));
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp_.c_str());
        throw Error(path_ + ": cannot rename into place: " + std::strerror(err));
    }
    kill_point(kill_step_for("renamed", path_));
    auto parent = std::filesystem::path(path_).parent_path();
    fsync_path(parent.empty() ? "." : parent.string());
}

void rename_into_place(const std::string& from, const std::string& to) {
    fsync_path(from);
    kill_point(kill_step_for("rename", to));
    std::error_code error;
    std::filesystem::rename(from, to, error);
    if (error) throw Error(to + ": cannot rename " + from + " into place: " + error.message());
    kill_point(kill_step_for("renamed", to));
    const auto parent = std::filesystem::path(to).parent_path();
    fsync_path(parent.empty() ? "." : parent.string());
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
    AtomicFile file(path);
    file.write(bytes.data(), bytes.size());
    file.commit();
}

void remove_stale_temp_files(const std::string& dir) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const auto at = name.find(".tmp-");
        if (at == std::string::npos) continue;
        const auto dash = name.find('-', at + 5);
        const std::string digits = name.substr(at + 5, dash == std::string::npos ? std::string::npos : dash - at - 5);
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
        const pid_t pid = static_cast<pid_t>(std::stol(digits));
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) {
            std::error_code ignored;
            std::filesystem::remove(it->path(), ignored);
        }
    }
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
