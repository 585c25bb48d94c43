// The build without MPI (NOVELTY_MPI=OFF or no MPI found): every process is a world of one.
// CMake compiles it only without MPI; the real one is engine/src/shard/mpi/.
#include "novelty/shard/shard.hpp"
#include "novelty/util/error.hpp"
#include "shard/shard_launch.hpp"

#include <string>

namespace novelty {

namespace {
const ShardWorld one;
}  // namespace

bool mpi_compiled() { return false; }

ShardWorld shard_init(int*, char***) {
    if (launched_by_mpi() && launched_ranks() > 1)
        throw UsageError("started by an MPI launcher with " + std::to_string(launched_ranks()) +
                         " ranks, but this build has no MPI (rebuild with NOVELTY_MPI=ON): each rank would run the "
                         "whole command alone");
    return one;
}

const ShardWorld& shard_world() { return one; }

int shard_serve() { return 0; }

int shard_finish(int exit_code) { return exit_code; }

std::unique_ptr<SearchIndex> make_sharded_index(const Corpus&, const ShardBackendSpec&) {
    throw UsageError("a sharded index needs MPI, which was not compiled into this build (NOVELTY_MPI)");
}

}  // namespace novelty
