// The corpus sharded over MPI ranks (docs/scaling.md). Under an MPI launcher (`mpirun -np R`),
// rank 0 runs the command and every rank holds one shard of the corpus: the rows r, r + R,
// r + 2R, ... of rank r. A sharded index (make_sharded_index) broadcasts each call's queries,
// lets every rank search its own shard with its own backend, and merges the per-rank top-k
// lists on rank 0 by the engine's rule (similarity descending, then lower global row), so its
// answers are those of one process. Ranks other than 0 only serve shards (shard_serve).
// In a build without MPI (NOVELTY_MPI=OFF) every process is a world of one.
#pragma once

#include "novelty/corpus/corpus.hpp"
#include "novelty/search/backends.hpp"
#include "novelty/search/search.hpp"

#include <memory>
#include <string>

namespace novelty {

/// This process's place in the MPI job: rank 0 of 1 without MPI.
struct ShardWorld {
    int rank = 0;
    int size = 1;
    int local_rank = 0;  ///< rank among the ranks on this machine: picks the GPU on a GPU box
};

/// Whether MPI was compiled in (NOVELTY_MPI).
bool mpi_compiled();

/// Joins the MPI job when an MPI launcher started this process (Open MPI's
/// OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment), otherwise returns a world
/// of one without touching MPI. Call once, first thing in main. Throws UsageError when a
/// launcher started several ranks of a build without MPI (each would run the whole command).
ShardWorld shard_init(int* argc, char*** argv);

/// The world shard_init found (a world of one before it is called).
const ShardWorld& shard_world();

/// Ranks > 0: serves the shards rank 0 asks for until rank 0 calls shard_finish, then leaves
/// MPI. Returns rank 0's exit code, which this rank should exit with.
int shard_serve();

/// Rank 0: tells every other rank that the run ended with `exit_code` and leaves MPI (nothing
/// without MPI). Returns exit_code.
int shard_finish(int exit_code);

/// What each rank builds its shard's index with: the device ("auto", "cpu", "cuda"; on a GPU
/// box each rank takes the GPU of its local rank), CUDA options and tuning.
struct ShardBackendSpec {
    std::string device = "auto";
    CudaBackendOptions cuda;
    CpuBackendOptions cpu;  ///< the storage of CPU shards
    SearchTuning tuning;
};

/// Rank 0, when shard_world().size > 1: an index over `corpus` (which must outlive it) whose
/// rows are spread over every rank. Each rank opens the corpus directory by the same path
/// (relative paths in its own working directory) and must find the same vectors (checksum,
/// shape, dtype; CorpusError naming the rank otherwise). An error on any rank during a call
/// ends the call on every rank and is rethrown here, of the same kind, naming that rank.
/// Results are identical to an index of the same backend in one process (bitwise on the CPU).
std::unique_ptr<SearchIndex> make_sharded_index(const Corpus& corpus, const ShardBackendSpec& spec);

}  // namespace novelty
