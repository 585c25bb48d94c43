// Request batching: requests that arrive together are handed to the backend in one call.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace novelty::host {

struct BatcherOptions {
    /// Most records per backend call (a request's weight is its records; a request heavier than
    /// this goes alone). 1 turns batching off: one request per call.
    std::size_t max_batch = 64;
    /// How long the first request of a batch waits for others before the batch goes anyway.
    std::chrono::microseconds max_wait{2000};
};

/// Gathers requests from any number of threads into batches for one worker thread, which calls
/// the backend once per batch. A batch closes when its records reach max_batch or max_wait has
/// passed since its first request arrived; requests keep their arrival order within a batch.
/// The backend gets the batch's requests and must return one reply per request, in the same
/// order; when it throws, every request of that batch gets the exception. Thread-safe.
template <class Request, class Reply>
class Batcher {
public:
    using Backend = std::function<std::vector<Reply>(std::vector<Request>& batch)>;
    using Weight = std::function<std::size_t(const Request&)>;

    /// `weight` counts a request's records; empty = 1 per request.
    Batcher(Backend backend, BatcherOptions options, Weight weight = {})
        : backend_(std::move(backend)), options_(options), weight_(std::move(weight)) {
        if (options_.max_batch == 0) options_.max_batch = 1;
        worker_ = std::thread([this] { run(); });
    }
    ~Batcher() { stop(); }
    Batcher(const Batcher&) = delete;
    Batcher& operator=(const Batcher&) = delete;

    /// Queues a request; the future holds its reply (or the backend's exception). After stop(),
    /// throws std::runtime_error.
    std::future<Reply> submit(Request request) {
        std::future<Reply> reply;
        {
            std::lock_guard lock(mutex_);
            if (stopping_) throw std::runtime_error("the server is shutting down");
            pending_.push_back(Pending{std::move(request), {}, std::chrono::steady_clock::now()});
            reply = pending_.back().promise.get_future();
        }
        wake_.notify_one();
        return reply;
    }

    /// Answers every queued request, then ends the worker. Idempotent.
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_one();
        if (worker_.joinable()) worker_.join();
    }

    /// Backend calls made so far (one per batch).
    std::size_t backend_calls() const { return calls_.load(); }
    /// Requests answered so far.
    std::size_t requests_done() const { return requests_.load(); }
    /// Records (request weights) answered so far.
    std::size_t records_done() const { return records_.load(); }

private:
    struct Pending {
        Request request;
        std::promise<Reply> promise;
        std::chrono::steady_clock::time_point arrived;
    };

    std::size_t weight_of(const Request& r) const { return weight_ ? std::max<std::size_t>(1, weight_(r)) : 1; }

    void run() {
        std::unique_lock lock(mutex_);
        while (true) {
            wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) return;  // stopping and nothing left
            const auto deadline = pending_.front().arrived + options_.max_wait;
            wake_.wait_until(lock, deadline, [&] { return stopping_ || queued_weight() >= options_.max_batch; });
            std::vector<Pending> batch;
            std::size_t weight = 0;
            while (!pending_.empty()) {
                const std::size_t w = weight_of(pending_.front().request);
                if (!batch.empty() && weight + w > options_.max_batch) break;
                weight += w;
                batch.push_back(std::move(pending_.front()));
                pending_.pop_front();
            }
            lock.unlock();
            answer(batch, weight);
            lock.lock();
        }
    }

    std::size_t queued_weight() const {
        std::size_t total = 0;
        for (const auto& p : pending_) {
            total += weight_of(p.request);
            if (total >= options_.max_batch) break;
        }
        return total;
    }

    void answer(std::vector<Pending>& batch, std::size_t weight) {
        std::vector<Request> requests;
        requests.reserve(batch.size());
        for (auto& p : batch) requests.push_back(std::move(p.request));
        ++calls_;
        // Counted before the replies go out, so that a caller holding its reply sees its count.
        requests_ += batch.size();
        records_ += weight;
        try {
            std::vector<Reply> replies = backend_(requests);
            if (replies.size() != batch.size())
                throw std::logic_error("batch backend returned " + std::to_string(replies.size()) + " replies for " +
                                       std::to_string(batch.size()) + " requests");
            for (std::size_t i = 0; i < batch.size(); ++i) batch[i].promise.set_value(std::move(replies[i]));
        } catch (...) {
            const std::exception_ptr error = std::current_exception();
            for (auto& p : batch) p.promise.set_exception(error);
        }
    }

    Backend backend_;
    BatcherOptions options_;
    Weight weight_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Pending> pending_;
    bool stopping_ = false;
    std::atomic<std::size_t> calls_{0}, requests_{0}, records_{0};
    std::thread worker_;
};

}  // namespace novelty::host
