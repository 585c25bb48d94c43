// What the environment says about an MPI launch (no MPI calls): used by both the MPI build and
// the build without MPI (which refuses a launch of several ranks).
#pragma once

namespace novelty {

/// True when an MPI launcher started this process: Open MPI's OMPI_COMM_WORLD_SIZE, or
/// PMI_SIZE / PMIX_RANK (MPICH, Slurm) in the environment.
bool launched_by_mpi();

/// The number of ranks the launcher says it started (1 when it says nothing).
int launched_ranks();

/// This rank's index among the ranks on its machine: OMPI_COMM_WORLD_LOCAL_RANK,
/// MPI_LOCALRANKID or SLURM_LOCALID; 0 when none is set.
int local_rank_from_environment();

}  // namespace novelty
