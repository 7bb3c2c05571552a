#pragma once
// How many MPI ranks the launcher started, read from its environment without initialising MPI
// (Open MPI's OMPI_COMM_WORLD_SIZE, the PMI_SIZE of MPICH and Slurm's srun); 1 outside mpirun.
namespace cpm {

int launched_ranks();

}  // namespace cpm
