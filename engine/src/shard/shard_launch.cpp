#include "shard/shard_launch.hpp"

#include <cstdlib>

namespace novelty {

namespace {

int env_int(const char* name, int fallback) {
    const char* text = std::getenv(name);
    return text && *text ? std::atoi(text) : fallback;
}

}  // namespace

bool launched_by_mpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

int launched_ranks() { return env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", 1)); }

int local_rank_from_environment() {
    return env_int("OMPI_COMM_WORLD_LOCAL_RANK", env_int("MPI_LOCALRANKID", env_int("SLURM_LOCALID", 0)));
}

}  // namespace novelty
