#pragma once
// How many MPI ranks the launcher started, read from its environment without initialising MPI
// (Open MPI's OMPI_COMM_WORLD_SIZE, the PMI_SIZE of MPICH and Slurm's srun); 1 outside mpirun.
// And MPI itself, for the lifetime of a command.
namespace cpm {

int launched_ranks();
// How many of them run on this machine (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
// SLURM_NTASKS_PER_NODE); launched_ranks() when the launcher does not say.
int launched_local_ranks();

// Initialises MPI for the lifetime of the object (if nobody else did) and finalises it after.
class MpiEnvironment {
 public:
  MpiEnvironment();
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1;
};

}  // namespace cpm
