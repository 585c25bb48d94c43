// Per-call measurements of a sharded index: each rank's compute seconds, seconds inside MPI
// and bytes sent, gathered on rank 0 and appended as one JSON line to the file named by
// NOVELTY_MPI_PROFILE (nothing is written without it; bench/run_mpi_bench.sh reads them).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace novelty::shard_ops {

class ShardProfile {
public:
    /// Starts the call's clock and zeroes this rank's traffic counters.
    explicit ShardProfile(std::string op);
    /// Collective: gathers every rank's figures on rank 0, which writes the line.
    void finish();

    std::size_t n_queries = 0;
    std::size_t k = 0;
    double compute_seconds = 0;  ///< this rank's work on its own shard (wall clock)
    double compute_cpu_seconds = 0;  ///< the same work in this process's CPU seconds (all its threads)
    double merge_seconds = 0;    ///< rank 0: merging the per-rank lists

    /// This process's CPU seconds so far (all threads): under a loaded machine, wall-clock time
    /// says little about the work; CPU time says what it would take alone.
    static double process_cpu_seconds();

private:
    std::string op_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace novelty::shard_ops
