// The direct pair sum of one system over MPI ranks (solvers/distributed_pair_sum.hpp) against the
// blocked sum of one process, in the same run: run it under mpirun with 1 and with 2 ranks,
//
//   OMP_NUM_THREADS=2 mpirun --bind-to none -x OMP_NUM_THREADS -np 1
//       build/bin/distributed_pair_sum_bench [N] [d]
//   OMP_NUM_THREADS=1 mpirun --bind-to none -x OMP_NUM_THREADS -np 2
//       build/bin/distributed_pair_sum_bench [N] [d]
//
// (Open MPI binds a rank to one core unless told `--bind-to none`, and passes OMP_NUM_THREADS on
// only with -x.)
// (default N = 20,000, d = 2, W = |z|^{-1}). Every rank times the whole-system blocked sum on
// its own (the baseline, on the threads it has), then the distributed sum over its share; rank 0
// prints both and their ratio: with one rank the distributed path must cost nothing (ratio ~1),
// with P ranks it does N²/P pairs per rank where the blocked sum does N²/2.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench/instruction_set.hpp"
#include "core/random_stream.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/distributed_pair_sum.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call of sum.compute(x), the best of `repeats` after a warm-up, all ranks in step.
double seconds_per_call(cpm::InteractionSum& sum, const Eigen::MatrixXd& x, int repeats) {
  Eigen::MatrixXd gradient(x.rows(), x.cols());
  double energy = 0.0, best = 1e300;
  sum.compute(x, gradient, &energy);
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    sum.compute(x, gradient, &energy);
    MPI_Barrier(MPI_COMM_WORLD);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const long n = argc > 1 ? std::atol(argv[1]) : 20000;
  const int d = argc > 2 ? std::atoi(argv[2]) : 2;
  if (rank == 0) cpm::print_instruction_set();
  Eigen::MatrixXd all(n, d);
  for (long k = 0; k < n; ++k) {
    cpm::RandomStream stream(1, cpm::RandomPurpose::test_inputs, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) all(k, a) = stream.normal();
  }
  const long first = n * rank / ranks, last = n * (rank + 1) / ranks;
  const Eigen::MatrixXd share = all.middleRows(first, last - first);
  const cpm::InteractionKernel kernel = cpm::InteractionKernel::power(1.0);
  const auto blocked = cpm::make_blocked_pair_sum(kernel);
  cpm::DistributedPairSum distributed(kernel, MPI_COMM_WORLD);
  const double baseline = seconds_per_call(*blocked, all, 5);
  const double spread = seconds_per_call(distributed, share, 5);
  if (rank == 0)
    std::printf(
        "N = %ld, d = %d, %d rank(s): blocked sum of one process %.4f s, distributed %.4f s,"
        " ratio %.2fx\n",
        n, d, ranks, baseline, spread, baseline / spread);
  MPI_Finalize();
  return 0;
}
