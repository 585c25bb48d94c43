#include "novelty_host/jobs/job_registry.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <random>
#include <stdexcept>

namespace novelty::host {

namespace {

double now_unix() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_id() {
    static std::mutex mutex;
    static std::mt19937_64 generator{std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32)};
    std::lock_guard lock(mutex);
    static const char* hex = "0123456789abcdef";
    std::string id;
    for (int part = 0; part < 2; ++part) {
        std::uint64_t bits = generator();
        for (int i = 0; i < 16; ++i, bits >>= 4) id += hex[bits & 15];
    }
    return id;
}

}  // namespace

const char* job_state_name(JobState state) {
    switch (state) {
        case JobState::queued: return "queued";
        case JobState::running: return "running";
        case JobState::done: return "done";
        case JobState::failed: return "failed";
    }
    return "unknown";
}

struct JobRegistry::Job {
    JobSnapshot snapshot;
    ProgressWork work;
};

JobRegistry::JobRegistry(std::size_t workers, std::size_t keep_finished) : keep_finished_(keep_finished) {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, workers); ++i) workers_.emplace_back([this] { run(); });
}

JobRegistry::~JobRegistry() { stop(); }

std::string JobRegistry::submit(const std::string& kind, Work work) {
    return submit_with_progress(kind, [work = std::move(work)](const JobProgressFn&) { return work(); });
}

std::string JobRegistry::submit_with_progress(const std::string& kind, ProgressWork work) {
    auto job = std::make_shared<Job>();
    job->snapshot.kind = kind;
    job->snapshot.created_unix = now_unix();
    job->work = std::move(work);
    {
        std::lock_guard lock(mutex_);
        if (stopping_) throw std::runtime_error("the server is shutting down");
        do job->snapshot.id = random_id();
        while (jobs_.count(job->snapshot.id));
        jobs_[job->snapshot.id] = job;
        queue_.push_back(job);
    }
    wake_.notify_one();
    return job->snapshot.id;
}

std::optional<JobSnapshot> JobRegistry::get(const std::string& id) const {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    return it->second->snapshot;
}

std::vector<std::size_t> JobRegistry::counts() const {
    std::vector<std::size_t> counts(4, 0);
    std::lock_guard lock(mutex_);
    for (const auto& [id, job] : jobs_) ++counts[static_cast<std::size_t>(job->snapshot.state)];
    return counts;
}

void JobRegistry::stop() {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ && workers_.empty()) return;
        stopping_ = true;
        for (auto& job : queue_) {
            job->snapshot.state = JobState::failed;
            job->snapshot.error = "the server shut down before the job started";
            job->snapshot.finished_unix = now_unix();
            job->work = nullptr;
            finished_order_.push_back(job->snapshot.id);
        }
        queue_.clear();
    }
    wake_.notify_all();
    for (auto& worker : workers_)
        if (worker.joinable()) worker.join();
    std::lock_guard lock(mutex_);
    workers_.clear();
}

void JobRegistry::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        std::shared_ptr<Job> job = queue_.front();
        queue_.pop_front();
        job->snapshot.state = JobState::running;
        ProgressWork work = std::move(job->work);
        lock.unlock();
        const JobProgressFn report = [this, job](const std::string& stage, std::size_t done, std::size_t total) {
            std::lock_guard guard(mutex_);
            job->snapshot.progress = JobProgress{stage, done, total};
        };
        std::string result, error;
        bool ok = true;
        try {
            result = work(report);
        } catch (const std::exception& e) {
            ok = false;
            error = e.what();
        } catch (...) {
            ok = false;
            error = "unknown error";
        }
        lock.lock();
        job->snapshot.state = ok ? JobState::done : JobState::failed;
        job->snapshot.result = std::move(result);
        job->snapshot.error = std::move(error);
        job->snapshot.finished_unix = now_unix();
        finished_order_.push_back(job->snapshot.id);
        forget_old_locked();
    }
}

void JobRegistry::forget_old_locked() {
    while (finished_order_.size() > keep_finished_) {
        jobs_.erase(finished_order_.front());
        finished_order_.pop_front();
    }
}

}  // namespace novelty::host
