#include "shard/mpi/mpi_comm.hpp"

#include "novelty/util/error.hpp"
#include "util/parallel_for.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>

namespace novelty::mpi {

namespace {

constexpr std::size_t max_piece = std::size_t(1) << 30;  // bytes per MPI call (int counts)

// Times one MPI call into the traffic counters.
class CommTimer {
public:
    CommTimer() : start_(std::chrono::steady_clock::now()) {}
    ~CommTimer() {
        traffic().comm_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

int checked_count(std::size_t bytes) {
    if (bytes > static_cast<std::size_t>(INT_MAX))
        throw Error("sharded index: one rank's part of a message exceeds 2 GiB; use smaller query batches");
    return static_cast<int>(bytes);
}

std::uint64_t errors_thrown = 0;
std::size_t merge_threads = 0;  // reduce_lists's threads, for the operator (which has no context)

// MPI_Reduce's operator: each element is one query's list of k entries (k from the type's size).
void merge_lists_op(void* in, void* inout, int* len, MPI_Datatype* type) {
    int bytes = 0;
    MPI_Type_size(*type, &bytes);
    const std::size_t k = static_cast<std::size_t>(bytes) / sizeof(ListEntry);
    auto* into = static_cast<ListEntry*>(inout);
    const auto* from = static_cast<const ListEntry*>(in);
    const auto n = static_cast<std::size_t>(*len);
    constexpr std::size_t lists_per_block = 512;  // large merges (a self-join block) on all threads
    parallel_for_blocks((n + lists_per_block - 1) / lists_per_block, merge_threads, [&](std::size_t block) {
        for (std::size_t i = block * lists_per_block; i < std::min(n, (block + 1) * lists_per_block); ++i)
            merge_two_lists(into + i * k, from + i * k, k);
    });
}

// An error of `kind` carrying another rank's message.
[[noreturn]] void throw_rebuilt(int kind, const std::string& message, const std::string& parameter,
                                const std::string& file, std::uint64_t line, int from) {
    const std::string where = " (on rank " + std::to_string(from) + ")";
    ++errors_thrown;
    switch (static_cast<ErrorKind>(kind)) {
        case ErrorKind::usage: throw UsageError(message + where, parameter);
        case ErrorKind::input: throw InputError(file, line, message + where);
        case ErrorKind::corpus: throw CorpusError(message + where);
        default: throw Error(message + where);
    }
}

}  // namespace

int rank() {
    int value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &value);
    return value;
}

int size() {
    int value = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &value);
    return value;
}

Traffic& traffic() {
    static Traffic counters;
    return counters;
}

void bcast_bytes(void* data, std::size_t bytes, int root) {
    CommTimer timer;
    if (rank() == root) traffic().bytes_sent += bytes * static_cast<std::size_t>(size() - 1);
    auto* p = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes; done += max_piece)
        MPI_Bcast(p + done, static_cast<int>(std::min(max_piece, bytes - done)), MPI_BYTE, root, MPI_COMM_WORLD);
}

void bcast_from_root_idle(void* data, std::size_t bytes) {
    MPI_Request request;
    MPI_Ibcast(data, checked_count(bytes), MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    if (rank() == 0) {
        traffic().bytes_sent += bytes * static_cast<std::size_t>(size() - 1);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        return;
    }
    for (int done = 0;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

void bcast_string(std::string& text, int root) {
    std::vector<char> bytes(text.begin(), text.end());
    bcast_vector(bytes, root);
    text.assign(bytes.begin(), bytes.end());
}

void gather_bytes(const void* data, std::size_t bytes, std::vector<char>& out) {
    CommTimer timer;
    const int count = checked_count(bytes);
    if (rank() == 0) {
        out.resize(bytes * static_cast<std::size_t>(size()));
    } else {
        traffic().bytes_sent += bytes;
    }
    MPI_Gather(data, count, MPI_BYTE, rank() == 0 ? out.data() : nullptr, count, MPI_BYTE, 0, MPI_COMM_WORLD);
}

void allgather_bytes(const void* data, const std::vector<std::size_t>& counts, std::vector<char>& out) {
    CommTimer timer;
    std::vector<int> sizes(counts.size()), offsets(counts.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        sizes[r] = checked_count(counts[r]);
        offsets[r] = checked_count(total);
        total += counts[r];
    }
    checked_count(total);
    traffic().bytes_sent += counts[static_cast<std::size_t>(rank())] * (counts.size() - 1);
    out.resize(total);
    MPI_Allgatherv(data, sizes[static_cast<std::size_t>(rank())], MPI_BYTE, out.data(), sizes.data(), offsets.data(),
                   MPI_BYTE, MPI_COMM_WORLD);
}

void reduce_lists(std::vector<ListEntry>& entries, std::size_t k, std::size_t threads) {
    CommTimer timer;
    merge_threads = threads;
    const std::size_t n = k == 0 ? 0 : entries.size() / k;
    const int count = checked_count(n);
    checked_count(k * sizeof(ListEntry));
    if (n == 0) return;
    MPI_Datatype list_type;
    MPI_Type_contiguous(static_cast<int>(k * sizeof(ListEntry)), MPI_BYTE, &list_type);
    MPI_Type_commit(&list_type);
    MPI_Op op;
    MPI_Op_create(&merge_lists_op, 1, &op);
    if (rank() == 0) {
        MPI_Reduce(MPI_IN_PLACE, entries.data(), count, list_type, op, 0, MPI_COMM_WORLD);
    } else {
        traffic().bytes_sent += entries.size() * sizeof(ListEntry);  // to its parent in the tree
        MPI_Reduce(entries.data(), nullptr, count, list_type, op, 0, MPI_COMM_WORLD);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&list_type);
}

void agree(const std::exception_ptr& local_error) {
    int mine = local_error ? rank() : size(), first = size();
    {
        CommTimer timer;
        MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (first == size()) return;
    int kind = static_cast<int>(ErrorKind::failure);
    std::string message, parameter, file;
    std::uint64_t line = 0;
    if (rank() == first) {
        try {
            std::rethrow_exception(local_error);
        } catch (const std::exception& e) {
            kind = static_cast<int>(error_kind(e));
            message = e.what();
            if (const auto* usage = dynamic_cast<const UsageError*>(&e)) parameter = usage->parameter();
            if (const auto* input = dynamic_cast<const InputError*>(&e)) {
                message = input->problem();
                file = input->file();
                line = input->line();
            }
        } catch (...) {
            message = "an unknown error";
        }
    }
    bcast_bytes(&kind, sizeof kind, first);
    bcast_bytes(&line, sizeof line, first);
    bcast_string(message, first);
    bcast_string(parameter, first);
    bcast_string(file, first);
    if (rank() == first) {
        ++errors_thrown;
        std::rethrow_exception(local_error);
    }
    throw_rebuilt(kind, message, parameter, file, line, first);
}

std::uint64_t agreed_errors() { return errors_thrown; }

void abort_job(const std::string& message, int exit_code) {
    std::fprintf(stderr, "novelty: error: rank %d: %s; ending every rank\n", rank(), message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::abort();
}

}  // namespace novelty::mpi
