#include "corpus/corpus_lock.hpp"

#include "novelty/util/error.hpp"
#include "util/notices.hpp"

#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

namespace novelty {

namespace {

// The directories this process holds the exclusive lock on, by (device, inode).
std::mutex registry_mutex;
std::set<std::pair<unsigned long long, unsigned long long>>& held_registry() {
    static std::set<std::pair<unsigned long long, unsigned long long>> held;
    return held;
}

int flock_retrying(int fd, int operation) {
    int rc;
    do rc = ::flock(fd, operation);
    while (rc != 0 && errno == EINTR);
    return rc;
}

// A file system without flock (some network ones): readers go unlocked, and an add takes the
// copy path, which needs no lock.
bool unsupported(int error) { return error == ENOLCK || error == EOPNOTSUPP || error == EINVAL; }

}  // namespace

CorpusLock::CorpusLock(const std::filesystem::path& dir) : dir_(dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw CorpusError(dir.string() + ": cannot open the corpus directory: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        ::close(fd_);
        throw CorpusError(dir.string() + ": cannot stat the corpus directory: " + std::strerror(errno));
    }
    dev_ = static_cast<unsigned long long>(st.st_dev);
    ino_ = static_cast<unsigned long long>(st.st_ino);
}

CorpusLock::~CorpusLock() {
    unlock();
    ::close(fd_);
}

bool CorpusLock::names(const std::filesystem::path& path) const {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && static_cast<unsigned long long>(st.st_dev) == dev_ &&
           static_cast<unsigned long long>(st.st_ino) == ino_;
}

bool CorpusLock::borrow_if_held_here() {
    std::lock_guard<std::mutex> guard(registry_mutex);
    if (mode_ != Mode::none || !held_registry().count({dev_, ino_})) return false;
    mode_ = Mode::borrowed;
    return true;
}

void CorpusLock::mark_exclusive() {
    mode_ = Mode::exclusive;
    std::lock_guard<std::mutex> guard(registry_mutex);
    held_registry().insert({dev_, ino_});
}

bool CorpusLock::try_exclusive() {
    if (mode_ == Mode::exclusive) return true;
    if (flock_retrying(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK || unsupported(errno)) return false;
        throw Error(dir_.string() + ": cannot lock the corpus directory: " + std::strerror(errno));
    }
    mark_exclusive();
    return true;
}

void CorpusLock::exclusive_waiting() {
    if (mode_ == Mode::exclusive || mode_ == Mode::borrowed) return;
    if (borrow_if_held_here()) return;
    if (flock_retrying(fd_, LOCK_EX) != 0) {
        if (unsupported(errno)) return;
        throw Error(dir_.string() + ": cannot lock the corpus directory: " + std::strerror(errno));
    }
    mark_exclusive();
}

void CorpusLock::shared() {
    if (mode_ == Mode::shared || mode_ == Mode::borrowed) return;
    if (borrow_if_held_here()) return;
    if (mode_ == Mode::exclusive) {
        std::lock_guard<std::mutex> guard(registry_mutex);
        held_registry().erase({dev_, ino_});
    }
    if (flock_retrying(fd_, LOCK_SH | LOCK_NB) != 0) {
        if (unsupported(errno)) return;  // (no in-place add can run there either)
        if (errno != EWOULDBLOCK) throw Error(dir_.string() + ": cannot lock the corpus directory: " + std::strerror(errno));
        notice("waiting for the 'corpus add' that is updating " + dir_.string() + " to finish");
        if (flock_retrying(fd_, LOCK_SH) != 0)
            throw Error(dir_.string() + ": cannot lock the corpus directory: " + std::strerror(errno));
    }
    mode_ = Mode::shared;
}

void CorpusLock::unlock() {
    if (mode_ == Mode::exclusive) {
        std::lock_guard<std::mutex> guard(registry_mutex);
        held_registry().erase({dev_, ino_});
    }
    if (mode_ == Mode::shared || mode_ == Mode::exclusive) flock_retrying(fd_, LOCK_UN);
    mode_ = Mode::none;
}

WorkFolderLock::WorkFolderLock(const std::filesystem::path& folder) {
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw Error(folder.string() + ": cannot open the work folder: " + std::strerror(errno));
    if (flock_retrying(fd_, LOCK_EX | LOCK_NB) != 0 && !unsupported(errno)) {
        const int error = errno;
        ::close(fd_);
        throw Error(folder.string() + ": cannot lock the work folder: " + std::strerror(error));
    }
}

WorkFolderLock::~WorkFolderLock() { ::close(fd_); }

bool work_folder_abandoned(const std::filesystem::path& folder, long pid) {
    const auto process_gone = [pid] { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; };
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return process_gone();
    bool abandoned;
    if (flock_retrying(fd, LOCK_EX | LOCK_NB) == 0) abandoned = true;  // (closing drops it again)
    else abandoned = errno == EWOULDBLOCK ? false : process_gone();
    ::close(fd);
    return abandoned;
}

namespace {

// The folders whose writer lock this thread holds: a writer that calls another (corpus embed
// attaching its rows through add_vectors) holds it already. Other threads wait on the flock.
thread_local std::set<std::pair<unsigned long long, unsigned long long>> folders_held_here;

}  // namespace

FolderWriterLock::FolderWriterLock(const std::filesystem::path& folder) {
    fd_ = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;
    struct stat st {};
    if (::fstat(fd_, &st) == 0) key_ = {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
    if (folders_held_here.count(key_)) {
        ::close(fd_);
        fd_ = -1;
        return;
    }
    if (flock_retrying(fd_, LOCK_EX | LOCK_NB) != 0) {
        const bool busy = errno == EWOULDBLOCK;
        if (busy) notice("waiting for another 'corpus add', 'corpus import --overwrite', 'corpus embed' or "
                         "'corpus add-vectors' in " + folder.string() + " to finish");
        if (!busy || flock_retrying(fd_, LOCK_EX) != 0) {
            const int error = errno;
            ::close(fd_);
            fd_ = -1;
            if (!unsupported(error)) throw Error(folder.string() + ": cannot lock the folder: " + std::strerror(error));
            return;
        }
    }
    folders_held_here.insert(key_);
}

FolderWriterLock::~FolderWriterLock() {
    if (fd_ < 0) return;
    folders_held_here.erase(key_);
    ::close(fd_);  // closing the last descriptor drops the lock
}

}  // namespace novelty
