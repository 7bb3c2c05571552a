// Scaling of the particle-mesh sum over MPI ranks (solvers/distributed_particle_mesh_sum.hpp):
//
//   mpirun --bind-to none -x OMP_NUM_THREADS -np P build/bin/distributed_mesh_bench
//       [strong|weak] [N] [d] [cells per axis] [steps]
//
// (default: strong, N = 10⁶, d = 2, 512 cells, 10 steps; weak: N particles per rank and the mesh
// refined with P along its last axis, cells · P planes). Each step evaluates the forces and moves
// every particle by a random displacement of a fifth of a cell (keyed by id and step), then
// migrates the particles to their slabs, as a Langevin step does. With one rank it first times the
// particle-mesh sum of one process on the same particles: the ratio shows what the decomposition
// costs on one rank. Rank 0 prints one line per rank count, key=value, for
// bench/distributed_cost_model.py: seconds per step split into particle work, near field,
// convolution (plane FFTs, transposes, last-axis FFTs), ghost and halo exchanges and migration
// (maxima over ranks), and the bytes each rank holds (buffers counted, and the peak resident size).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "bench/instruction_set.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "solvers/distributed_particle_mesh_sum.hpp"
#include "solvers/particle_mesh_sum.hpp"

namespace {

// Peak resident memory of this process in bytes (VmHWM), 0 if unknown.
double peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      double kilobytes = 0.0;
      status >> kilobytes;
      return kilobytes * 1024.0;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0.0;
}

double max_over_ranks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

// Particles of ids [first, first + count) uniform in the box [−1, 1]^d.
cpm::Particles uniform_share(long first, long count, int d) {
  cpm::Particles p(count, d);
  p.ids.resize(count);
  for (long i = 0; i < count; ++i) {
    p.ids[i] = static_cast<std::uint64_t>(first + i);
    cpm::RandomStream stream(1, cpm::RandomPurpose::test_inputs, 0, p.ids[i]);
    for (int a = 0; a < d; ++a) p.positions(i, a) = 2.0 * stream.uniform() - 1.0;
  }
  return p;
}

// A fifth of a cell at random along every axis, kept inside [−1, 1]^d.
void move(cpm::Particles& p, double cell, int step) {
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    cpm::RandomStream stream(2, cpm::RandomPurpose::test_inputs, static_cast<std::uint64_t>(step),
                             p.ids[i]);
    for (Eigen::Index a = 0; a < p.dim(); ++a)
      p.positions(i, a) = std::clamp(p.positions(i, a) + 0.2 * cell * stream.normal(), -1.0, 1.0);
  }
}

// Times `steps` steps of the spread sum on N particles (and with one rank the sum of one process)
// and prints the line of this rank count.
void run(const std::string& mode, long n, int d, const Eigen::VectorXi& cells, int cells_arg,
         int steps) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Eigen::VectorXd lower = Eigen::VectorXd::Constant(d, -1.0), upper = -lower;
  const cpm::InteractionKernel kernel = cpm::InteractionKernel::log();
  const int near = cpm::default_near_cells(d);
  const double cell = 2.0 / cells_arg;
  const long first = n * rank / ranks, last = n * (rank + 1) / ranks;
  cpm::Particles mine = uniform_share(first, last - first, d);
  cpm::DistributedParticleMeshSum sum(kernel, lower, upper, cells, near, MPI_COMM_WORLD);
  sum.redistribute(mine);
  Eigen::MatrixXd gradient(mine.size(), d);
  sum.compute(mine.positions, gradient, nullptr);  // warm-up
  const cpm::MeshSumTimes before = sum.times();
  double moving = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int step = 0; step < steps; ++step) {
    gradient.resize(mine.size(), d);
    sum.compute(mine.positions, gradient, nullptr);
    const double moved = MPI_Wtime();
    move(mine, cell, step);
    moving += MPI_Wtime() - moved;
    sum.redistribute(mine);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double per_step = (MPI_Wtime() - start - moving) / steps;
  const cpm::MeshSumTimes t = sum.times();
  auto per = [&](double total, double earlier) {
    return max_over_ranks((total - earlier) / steps);
  };
  const double particles = per(t.particles, before.particles);
  const double near_field = per(t.near_field, before.near_field);
  const double planes = per(t.convolution.planes, before.convolution.planes);
  const double transposes = per(t.convolution.transposes, before.convolution.transposes);
  const double columns = per(t.convolution.columns, before.convolution.columns);
  const double exchanges = per(t.exchanges, before.exchanges);
  const double migration = per(t.migration, before.migration);
  const double buffers = max_over_ranks(sum.memory_bytes());
  const double particle_arrays = max_over_ranks(static_cast<double>(mine.size()) * d * 8.0 * 8.0);
  const double resident = max_over_ranks(peak_resident_bytes());
  // One process on the same particles (with one rank only: the baseline of the decomposition),
  // after the peak resident size of the spread sum was read.
  double one_process = 0.0;
  if (ranks == 1) {
    cpm::Particles all = uniform_share(0, n, d);
    auto sum = cpm::make_particle_mesh_sum(kernel, lower, upper, cells, near);
    Eigen::MatrixXd gradient(n, d);
    sum->compute(all.positions, gradient, nullptr);
    for (int step = 0; step < steps; ++step) {
      const double start = MPI_Wtime();
      sum->compute(all.positions, gradient, nullptr);
      one_process += (MPI_Wtime() - start) / steps;
      move(all, cell, step);
    }
  }

  if (rank == 0) {
    std::printf(
        "mode=%s ranks=%d threads=%s N=%ld d=%d cells=%d last_axis=%d near=%d step=%.5f "
        "particles=%.5f near_field=%.5f planes=%.5f transposes=%.5f columns=%.5f "
        "exchanges=%.5f migration=%.5f buffer_bytes=%.4g particle_bytes=%.4g "
        "resident_bytes=%.4g",
        mode.c_str(), ranks, std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "?",
        n, d, cells_arg, cells[d - 1], near, per_step, particles, near_field, planes, transposes,
        columns, exchanges, migration, buffers, particle_arrays, resident);
    if (ranks == 1)
      std::printf(" one_process=%.5f ratio=%.3f", one_process, one_process / per_step);
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string mode = argc > 1 ? argv[1] : "strong";
  const bool weak = mode == "weak";
  const long n_arg = argc > 2 ? std::atol(argv[2]) : 1000000;
  const int d = argc > 3 ? std::atoi(argv[3]) : 2;
  const int cells_arg = argc > 4 ? std::atoi(argv[4]) : 512;
  const int steps = argc > 5 ? std::atoi(argv[5]) : 10;
  if (mode != "strong" && mode != "weak") {
    if (rank == 0)
      std::fprintf(stderr, "usage: distributed_mesh_bench [strong|weak] [N] [d] [cells] [steps]\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) cpm::print_instruction_set();
  const long n = weak ? n_arg * ranks : n_arg;
  Eigen::VectorXi cells = Eigen::VectorXi::Constant(d, cells_arg);
  if (weak) cells[d - 1] = cells_arg * ranks;
  run(mode, n, d, cells, cells_arg, steps);
  MPI_Finalize();
  return 0;
}
