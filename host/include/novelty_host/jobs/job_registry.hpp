// Long-running work behind an HTTP API: a job is created at once, runs on a worker thread, and
// is polled by its id until it is done or failed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace novelty::host {

enum class JobState { queued, running, done, failed };

/// "queued", "running", "done" or "failed".
const char* job_state_name(JobState state);

/// How far a running job got, as it last reported: `done` of `total` units of `stage` (e.g.
/// "proposals", 3 of 10).
struct JobProgress {
    std::string stage;
    std::size_t done = 0;
    std::size_t total = 0;
};

/// Lets a job's work report its progress; cheap, callable from any thread.
using JobProgressFn = std::function<void(const std::string& stage, std::size_t done, std::size_t total)>;

/// A job as seen from outside, copied at one moment.
struct JobSnapshot {
    std::string id;
    std::string kind;             ///< what it does, e.g. "claims"
    JobState state = JobState::queued;
    std::string result;           ///< the work's result (JSON text) once done; "" before
    std::string error;            ///< why it failed; "" unless failed
    double created_unix = 0;      ///< seconds since 1970
    double finished_unix = 0;     ///< 0 until done or failed
    std::optional<JobProgress> progress;  ///< the last progress report; none before the first
};

/// Runs jobs on `workers` threads, oldest first. Keeps at most `keep_finished` finished jobs
/// (the oldest finished are forgotten first); queued and running jobs are always kept.
/// Thread-safe.
class JobRegistry {
public:
    /// The work of a job: returns its result as JSON text; an exception fails the job with its
    /// message.
    using Work = std::function<std::string()>;
    /// Work that reports its progress through the function it is given.
    using ProgressWork = std::function<std::string(const JobProgressFn&)>;

    explicit JobRegistry(std::size_t workers = 1, std::size_t keep_finished = 1000);
    ~JobRegistry();
    JobRegistry(const JobRegistry&) = delete;
    JobRegistry& operator=(const JobRegistry&) = delete;

    /// Queues a job and returns its id (32 random hex characters, unguessable). Throws
    /// std::runtime_error after stop().
    std::string submit(const std::string& kind, Work work);
    /// As submit(), for work that reports progress (seen in get()'s snapshot.progress).
    std::string submit_with_progress(const std::string& kind, ProgressWork work);
    /// The job with this id, if it is known.
    std::optional<JobSnapshot> get(const std::string& id) const;
    /// Jobs known in each state, indexed by JobState.
    std::vector<std::size_t> counts() const;
    /// Lets running jobs finish, fails queued ones ("the server shut down before the job
    /// started") and ends the workers. Idempotent.
    void stop();

private:
    struct Job;
    void run();
    void forget_old_locked();

    std::size_t keep_finished_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::map<std::string, std::shared_ptr<Job>> jobs_;
    std::deque<std::shared_ptr<Job>> queue_;
    std::deque<std::string> finished_order_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace novelty::host
