// The MPI tests of parallel/, run by ctest under mpirun on 1, 2 and 4 ranks (CMakeLists.txt):
// every rank runs every test; rank 0 prints; the exit code is nonzero if a test failed on any
// rank.
#include <fftw3-mpi.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include "solvers/fftw_planner.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  cpm::initialise_fftw_mpi();
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  fftw_mpi_cleanup();
  MPI_Finalize();
  return any_failed;
}
