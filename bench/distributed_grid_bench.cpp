// The McKean–Vlasov grid solver over MPI ranks (solvers/mckean_vlasov.hpp, spread constructor):
//
//   mpirun --bind-to none -x OMP_NUM_THREADS -np P build/bin/distributed_grid_bench
//       [cells per axis] [d] [steps]
//
// (default 512 cells, d = 2, 20 steps). A Gaussian density on [−1, 1]^d, W = log, λ = 1, β = 100,
// the limited linear scheme, SSP-RK3 steps of the solver's own bound. Every rank times `steps`
// steps of its slab; with one rank the solver of one process is timed first on the same grid
// (the ratio shows what the decomposition costs on one rank). Rank 0 prints one line, key=value:
// seconds per step (the slowest rank), the cells each rank holds (its slab and halos), and the
// mass after the steps (conserved to rounding).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "bench/instruction_set.hpp"
#include "core/grid.hpp"
#include "physics/external_potential.hpp"
#include "solvers/mckean_vlasov.hpp"

namespace {

// Seconds per step of `steps` steps, the slowest rank's.
double seconds_per_step(cpm::McKeanVlasovSolver& solver, int steps) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int k = 0; k < steps; ++k) solver.step();
  double seconds = (MPI_Wtime() - start) / steps;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

void run(int cells, int d, int steps) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Eigen::VectorXd lower = Eigen::VectorXd::Constant(d, -1.0), upper = -lower;
  const cpm::Grid grid(cpm::Domain::box(lower, upper), lower, upper,
                       Eigen::VectorXi::Constant(d, cells));
  std::vector<double> density(static_cast<std::size_t>(grid.size()));
  double mass = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    density[c] = std::exp(-grid.centre(c).squaredNorm() / (2.0 * 0.1));
    mass += density[c] * grid.cell_volume();
  }
  for (double& v : density) v /= mass;
  const cpm::QuadraticPotential potential(1.0);
  cpm::McKeanVlasovParameters parameters;
  parameters.beta = 100.0;
  const cpm::InteractionKernel kernel = cpm::InteractionKernel::log();

  cpm::McKeanVlasovSolver spread(grid, potential, kernel, parameters, density,
                                 cpm::RankGroup(MPI_COMM_WORLD));
  spread.step();  // warm-up
  const double per_step = seconds_per_step(spread, steps);
  const double final_mass = spread.mass();
  double one_process = 0.0;
  if (ranks == 1) {
    cpm::McKeanVlasovSolver whole(grid, potential, kernel, parameters, density);
    whole.step();
    one_process = seconds_per_step(whole, steps);
  }
  if (rank == 0) {
    std::printf("ranks=%d threads=%s d=%d cells=%d step=%.5f part_cells=%ld mass=%.15f", ranks,
                std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "?", d, cells,
                per_step, static_cast<long>(spread.grid().size()), final_mass);
    if (ranks == 1)
      std::printf(" one_process=%.5f ratio=%.3f", one_process, one_process / per_step);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int cells = argc > 1 ? std::atoi(argv[1]) : 512;
  const int d = argc > 2 ? std::atoi(argv[2]) : 2;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 20;
  if (rank == 0) cpm::print_instruction_set();
  run(cells, d, steps);
  MPI_Finalize();
  return 0;
}
