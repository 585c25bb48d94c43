// Thin MPI helpers for the sharded index (MPI_COMM_WORLD only): broadcasts and gathers of any
// size (split under MPI's int counts), the error agreement that ends a call on every rank, and
// this rank's traffic counters. Only files in engine/src/shard/mpi/ include <mpi.h>.
#pragma once

#include "shard/shard_map.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace novelty::mpi {

int rank();
int size();

/// This rank's traffic since the last reset: seconds inside MPI calls and payload bytes sent,
/// counted as a flat implementation sends them (a broadcast root sends its buffer to each other
/// rank; a gather sends each rank's part once).
struct Traffic {
    double comm_seconds = 0;
    std::uint64_t bytes_sent = 0;
};
Traffic& traffic();

/// Broadcasts `bytes` bytes at `data` from `root`.
void bcast_bytes(void* data, std::size_t bytes, int root);

/// Broadcasts a vector (its size, then its elements) from `root`; other ranks' vectors are
/// resized to it.
template <typename T>
void bcast_vector(std::vector<T>& values, int root) {
    std::uint64_t n = values.size();
    bcast_bytes(&n, sizeof n, root);
    values.resize(n);
    bcast_bytes(values.data(), n * sizeof(T), root);
}

void bcast_string(std::string& text, int root);

/// A broadcast from rank 0 that the other ranks wait for without spinning: they poll it every
/// 200 microseconds and sleep in between, so a rank waiting for rank 0's next command (while
/// rank 0 reads inputs, embeds or writes) leaves its core to others. Every rank must call it.
void bcast_from_root_idle(void* data, std::size_t bytes);

/// Gathers `bytes` bytes from every rank into `out` on rank 0 (size() x bytes, rank order;
/// other ranks' `out` is untouched).
void gather_bytes(const void* data, std::size_t bytes, std::vector<char>& out);

/// Every rank sends `bytes` bytes (its own part, `counts[rank()]` bytes) and receives all parts
/// in rank order into `out` (sum of counts bytes).
void allgather_bytes(const void* data, const std::vector<std::size_t>& counts, std::vector<char>& out);

/// Merges every rank's n x k lists (`entries`, best first per query) into rank 0's `entries`
/// with merge_two_lists, along MPI_Reduce's tree: rank 0 receives and merges log2(size) sets of
/// lists, not size of them; each merge runs on `threads` threads (0 = all cores). Other ranks'
/// `entries` are left unspecified.
void reduce_lists(std::vector<ListEntry>& entries, std::size_t k, std::size_t threads);

/// The error check after a phase of a collective call: every rank passes the exception its
/// local work threw (or null). When none threw, returns. Otherwise every rank throws: the
/// lowest failing rank rethrows its own exception; every other rank throws one of the same
/// kind (UsageError, InputError, CorpusError or Error) with its message and "(on rank N)".
void agree(const std::exception_ptr& local_error);

/// How many errors agree() has thrown in this process: a collective call that sees an
/// exception without this count rising knows the ranks are no longer in step.
std::uint64_t agreed_errors();

/// Ends every rank of the job at once (MPI_Abort) after printing `message` on stderr: for a
/// failure that leaves the ranks out of step, where waiting would hang.
[[noreturn]] void abort_job(const std::string& message, int exit_code);

}  // namespace novelty::mpi
