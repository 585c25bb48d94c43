// The MPI job: joining it, the serving loop of ranks > 0, and the end of the run.
#include "shard/mpi/mpi_comm.hpp"
#include "shard/mpi/shard_ops.hpp"
#include "shard/shard_launch.hpp"

#include "novelty/shard/shard.hpp"
#include "novelty/util/error.hpp"

#include <mpi.h>

#include <map>

namespace novelty {

namespace {

ShardWorld world_state;
bool mpi_started = false;

// Serves one command; returns false on finish.
bool serve_one(const shard_ops::ShardCommand& command, std::map<std::uint64_t, std::unique_ptr<shard_ops::Shard>>& shards) {
    using shard_ops::Op;
    switch (command.op) {
        case Op::build: shards[command.index_id] = shard_ops::build(nullptr, nullptr); break;
        case Op::search: shard_ops::search(*shards.at(command.index_id), nullptr, command.a); break;
        case Op::candidates: shard_ops::search_candidates(*shards.at(command.index_id), nullptr, nullptr, command.a); break;
        case Op::self_join: shard_ops::self_join(*shards.at(command.index_id), command.a, command.c, {}); break;
        case Op::release: shards.erase(command.index_id); break;
        case Op::finish: return false;
    }
    return true;
}

}  // namespace

bool mpi_compiled() { return true; }

ShardWorld shard_init(int* argc, char*** argv) {
    if (!launched_by_mpi()) return world_state;
    MPI_Init(argc, argv);
    mpi_started = true;
    world_state.rank = mpi::rank();
    world_state.size = mpi::size();
    world_state.local_rank = local_rank_from_environment();
    return world_state;
}

const ShardWorld& shard_world() { return world_state; }

int shard_serve() {
    std::map<std::uint64_t, std::unique_ptr<shard_ops::Shard>> shards;
    for (;;) {
        const shard_ops::ShardCommand command = shard_ops::receive_command();
        const std::uint64_t agreed_before = mpi::agreed_errors();
        try {
            if (!serve_one(command, shards)) {
                shards.clear();
                MPI_Finalize();
                return command.exit_code;
            }
        } catch (const std::exception& e) {
            // An error every rank agreed on: rank 0 reports it and ends the run (finish).
            if (mpi::agreed_errors() == agreed_before)
                mpi::abort_job(e.what(), error_codes(error_kind(e)).exit_code);
        }
    }
}

int shard_finish(int exit_code) {
    if (!mpi_started) return exit_code;
    if (world_state.size > 1) shard_ops::send_command({shard_ops::Op::finish, exit_code, 0, 0, 0, 0});
    MPI_Finalize();
    return exit_code;
}

}  // namespace novelty
