#include "shard/mpi/shard_profile.hpp"

#include "shard/mpi/mpi_comm.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace novelty::shard_ops {

ShardProfile::ShardProfile(std::string op) : op_(std::move(op)), start_(std::chrono::steady_clock::now()) {
    mpi::traffic() = mpi::Traffic{};
}

double ShardProfile::process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

void ShardProfile::finish() {
    const mpi::Traffic mine_traffic = mpi::traffic();
    const double mine[4] = {compute_seconds, compute_cpu_seconds, mine_traffic.comm_seconds,
                            static_cast<double>(mine_traffic.bytes_sent)};
    std::vector<char> all;
    mpi::gather_bytes(mine, sizeof mine, all);
    const char* path = std::getenv("NOVELTY_MPI_PROFILE");
    if (mpi::rank() != 0 || !path || !*path) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::vector<double> figures(all.size() / sizeof(double));
    std::memcpy(figures.data(), all.data(), all.size());
    std::string ranks;
    for (std::size_t r = 0; r < figures.size() / 4; ++r) {
        char item[200];
        std::snprintf(item, sizeof item,
                      "%s{\"compute_s\": %.6f, \"compute_cpu_s\": %.6f, \"comm_s\": %.6f, \"bytes_sent\": %.0f}",
                      r ? ", " : "", figures[4 * r], figures[4 * r + 1], figures[4 * r + 2], figures[4 * r + 3]);
        ranks += item;
    }
    FILE* file = std::fopen(path, "a");
    if (!file) return;  // a measurement, never a reason to fail the call
    std::fprintf(file,
                 "{\"op\": \"%s\", \"ranks\": %zu, \"queries\": %zu, \"k\": %zu, \"seconds\": %.6f, \"merge_s\": %.6f, "
                 "\"per_rank\": [%s]}\n",
                 op_.c_str(), figures.size() / 4, n_queries, k, seconds, merge_seconds, ranks.c_str());
    std::fclose(file);
}

}  // namespace novelty::shard_ops
