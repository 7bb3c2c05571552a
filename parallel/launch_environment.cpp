#include "parallel/launch_environment.hpp"

#include <mpi.h>

#include <cstdlib>

namespace cpm {

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name)) {
      const int ranks = std::atoi(value);
      if (ranks >= 1) return ranks;
    }
  return 1;
}

int launched_local_ranks() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const char* value = std::getenv(name)) {
      const int ranks = std::atoi(value);
      if (ranks >= 1) return ranks;
    }
  return launched_ranks();
}

MpiEnvironment::MpiEnvironment() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiEnvironment::~MpiEnvironment() {
  if (owns_) MPI_Finalize();
}

}  // namespace cpm
