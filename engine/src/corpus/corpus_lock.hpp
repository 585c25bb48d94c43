// Readers and in-place writers of one corpus directory. `corpus add` updates papers.sqlite in
// place (add_in_place.hpp), so while it runs no other process may read the corpus: every
// Corpus::open holds a shared advisory lock (flock) on the directory itself for as long as the
// corpus is open, and the in-place add holds the exclusive one. An add that cannot take the
// exclusive lock at once (the corpus is open elsewhere: a server, a search) builds a copy beside
// the corpus and renames it into place instead, as before, so readers already running keep
// their consistent old view. The lock is on the directory's inode: a corpus replaced by a rename
// is a new directory with a lock of its own.
#pragma once

#include <filesystem>
#include <utility>

namespace novelty {

class CorpusLock {
public:
    /// Opens `dir` for locking (no lock is taken yet). Throws CorpusError when it cannot be opened.
    explicit CorpusLock(const std::filesystem::path& dir);
    ~CorpusLock();
    CorpusLock(const CorpusLock&) = delete;
    CorpusLock& operator=(const CorpusLock&) = delete;

    /// Takes the exclusive lock without waiting; false when another holder (in this process or
    /// another) has the directory locked.
    bool try_exclusive();
    /// Takes the exclusive lock, waiting while others hold the directory.
    void exclusive_waiting();
    /// Takes the shared lock, waiting (with a notice) while an add holds the exclusive one. A
    /// no-op when this process already holds the exclusive lock on the same directory (the add's
    /// own reads of the corpus).
    void shared();
    /// Drops whatever this lock holds.
    void unlock();
    /// True when this process holds the exclusive lock (through this object or another one).
    bool exclusive_here() const { return mode_ == Mode::exclusive || mode_ == Mode::borrowed; }
    /// True when `path` names the directory this lock is on (not another one renamed into its
    /// place since).
    bool names(const std::filesystem::path& path) const;

private:
    enum class Mode { none, shared, exclusive, borrowed };
    /// Another lock object of this process holds the exclusive lock on the directory: this one
    /// passes as `borrowed` (taking nothing). False when it does not, or this one holds a mode.
    bool borrow_if_held_here();
    /// Records the exclusive flock just taken (mode and the process's registry).
    void mark_exclusive();
    std::filesystem::path dir_;
    int fd_ = -1;
    unsigned long long dev_ = 0, ino_ = 0;
    Mode mode_ = Mode::none;
};

/// The lock of a work folder beside a corpus (an add's DIR.adding-PID, an import's
/// DIR.importing-PID): an exclusive flock on the folder,
/// taken by the process that creates it and held while that process works in it. Recovery
/// decides that the folder's writer is gone by this lock, not by the PID in the name: a PID is
/// in use again after a restart (an add running as PID 1 in a container, killed, and the next
/// command PID 1 again), a released lock is not.
class WorkFolderLock {
public:
    /// Locks `folder`, which the caller has just created (under the corpus's exclusive lock, so
    /// that no recovery looks at it before it is locked). Throws Error when it cannot be opened.
    explicit WorkFolderLock(const std::filesystem::path& folder);
    ~WorkFolderLock();
    WorkFolderLock(const WorkFolderLock&) = delete;
    WorkFolderLock& operator=(const WorkFolderLock&) = delete;

private:
    int fd_ = -1;
};

/// True when no process holds the work folder's lock (WorkFolderLock). On a file system
/// without flock, or a folder that cannot be opened, the PID recorded in its name decides: gone
/// when no process has it.
bool work_folder_abandoned(const std::filesystem::path& folder, long pid);

/// The writers that replace a corpus's files (corpus add, import --overwrite, corpus embed,
/// add-vectors) run one at a time within one folder: an exclusive lock (flock) on the folder that
/// holds the corpus, taken for the whole operation. Readers never take it; a thread that holds it
/// already passes (embed attaching through add_vectors). Without it, two adds through copies (the
/// corpus open elsewhere) would each rename their own result into place and the first one's
/// papers would be lost, and an add across an import would put its result over the new corpus.
/// Waits, with a notice, while another writer holds it; on a folder that cannot be opened or
/// locked (no flock), the writer goes on without it.
class FolderWriterLock {
public:
    explicit FolderWriterLock(const std::filesystem::path& folder);
    ~FolderWriterLock();
    FolderWriterLock(const FolderWriterLock&) = delete;
    FolderWriterLock& operator=(const FolderWriterLock&) = delete;

private:
    int fd_ = -1;
    std::pair<unsigned long long, unsigned long long> key_{0, 0};  ///< the folder's (device, inode)
};

}  // namespace novelty
