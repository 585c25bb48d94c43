#include "util/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace novelty {

std::size_t resolve_threads(std::size_t requested) {
    if (requested > 0) return requested;
    const unsigned hardware = std::thread::hardware_concurrency();
    return hardware == 0 ? 1 : hardware;
}

void parallel_for_blocks(std::size_t n_blocks, std::size_t threads, const std::function<void(std::size_t)>& fn,
                         const ProgressFn& progress) {
    if (n_blocks == 0) {
        if (progress) progress(0, 0);
        return;
    }
    threads = std::min(resolve_threads(threads), n_blocks);
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> done{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex mutex;
    std::condition_variable finished;
    std::size_t running = threads;

    auto work = [&] {
        for (;;) {
            const std::size_t block = next.fetch_add(1);
            if (block >= n_blocks || failed.load()) break;
            try {
                fn(block);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!error) error = std::current_exception();
                failed = true;
                break;
            }
            done.fetch_add(1);
        }
        std::lock_guard<std::mutex> lock(mutex);
        if (--running == 0) finished.notify_all();
    };

    // Every thread started is joined before this returns or throws, also when starting one or
    // the progress callback throws: a joinable std::thread destroyed in unwinding would end the
    // process (std::terminate).
    auto stop_with = [&](std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::move(e);
        failed = true;
    };
    std::vector<std::thread> workers;
    workers.reserve(threads);
    try {
        for (std::size_t t = progress ? 0 : 1; t < threads; ++t) workers.emplace_back(work);
    } catch (...) {
        stop_with(std::current_exception());
        std::lock_guard<std::mutex> lock(mutex);
        running -= threads - workers.size() - (progress ? 0 : 1);
    }
    if (!progress) {
        work();
    } else {
        // The calling thread reports progress while the workers run. A callback that throws stops
        // the work: the remaining blocks are skipped, the running ones finish, and it is rethrown.
        std::unique_lock<std::mutex> lock(mutex);
        while (running > 0) {
            finished.wait_for(lock, std::chrono::milliseconds(200));
            if (failed.load() || running == 0) continue;
            lock.unlock();
            try {
                progress(done.load(), n_blocks);
            } catch (...) {
                stop_with(std::current_exception());
            }
            lock.lock();
        }
    }
    for (auto& worker : workers) worker.join();
    if (error) std::rethrow_exception(error);
    if (progress) progress(n_blocks, n_blocks);
}

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
    constexpr std::size_t piece = std::size_t{4} << 20;
    if (bytes <= 2 * piece) {
        if (bytes > 0) std::memcpy(dst, src, bytes);
        return;
    }
    parallel_for_blocks((bytes + piece - 1) / piece, 0, [&](std::size_t block) {
        const std::size_t first = block * piece;
        std::memcpy(static_cast<unsigned char*>(dst) + first, static_cast<const unsigned char*>(src) + first,
                    std::min(piece, bytes - first));
    });
}

}  // namespace novelty
