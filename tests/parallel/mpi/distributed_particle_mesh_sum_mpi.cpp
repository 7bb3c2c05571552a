#include "solvers/distributed_particle_mesh_sum.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>

#include "core/domain.hpp"
#include "parallel/rank_group.hpp"
#include "solvers/force_field.hpp"
#include "solvers/langevin.hpp"
#include "solvers/particle_mesh_sum.hpp"
#include "tests/parallel/mpi/mpi_test_support.hpp"

namespace cpm {
namespace {

// N particles inside the box [−0.9, 0.9]^d, the same on every rank.
Eigen::MatrixXd particles_in_box(long n, int d) {
  return 0.9 * all_particles(n, d).array().tanh();
}

// The spread sum against the particle-mesh sum of one process over all particles, row by row
// (1e-12 relative to the largest row) and in the pair energy: 1D, 2D and 3D, the plain mesh and
// near ranges 0 to 3, singular and growing kernels. The particles start on ranks by id and move
// to the owners of their slabs.
TEST(DistributedParticleMeshSumMpi, EqualsTheSumOfOneProcess) {
  struct Case {
    InteractionKernel kernel;
    std::vector<int> cells;
    long n;
    int near_cells;
  };
  for (const Case& c : {Case{InteractionKernel::power(0.5), {64}, 500, 3},
                        Case{InteractionKernel::log(), {64}, 300, -1},
                        Case{InteractionKernel::log(), {32, 40}, 2000, 2},
                        Case{InteractionKernel::power(1.0), {40, 24}, 1500, 0},
                        Case{InteractionKernel::power(-0.5), {24, 32}, 800, -1},
                        Case{InteractionKernel::power(1.0), {16, 12, 20}, 3000, 2},
                        Case{InteractionKernel::log(), {12, 12, 24}, 1000, 3}}) {
    const int d = static_cast<int>(c.cells.size());
    const std::string what =
        c.kernel.describe() + " d=" + std::to_string(d) + " near=" + std::to_string(c.near_cells);
    const Eigen::VectorXd lower = Eigen::VectorXd::Constant(d, -1.0),
                          upper = Eigen::VectorXd::Constant(d, 1.0);
    const Eigen::VectorXi cells = Eigen::Map<const Eigen::VectorXi>(c.cells.data(), d);
    const Eigen::MatrixXd all = particles_in_box(c.n, d);
    Eigen::MatrixXd expected(c.n, d);
    double expected_energy = 0.0;
    make_particle_mesh_sum(c.kernel, lower, upper, cells, c.near_cells)
        ->compute(all, expected, &expected_energy);

    DistributedParticleMeshSum sum(c.kernel, lower, upper, cells, c.near_cells, MPI_COMM_WORLD);
    Particles mine = share_of(all, false);
    sum.redistribute(mine);
    Eigen::MatrixXd gradient(mine.size(), d);
    double energy = 0.0;
    sum.compute(mine.positions, gradient, &energy);
    const double scale = std::sqrt(expected.rowwise().squaredNorm().maxCoeff());
    long rows = mine.size();
    MPI_Allreduce(MPI_IN_PLACE, &rows, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(rows, c.n) << what;
    for (Eigen::Index i = 0; i < mine.size(); ++i)
      EXPECT_LE((gradient.row(i) - expected.row(static_cast<Eigen::Index>(mine.ids[i]))).norm(),
                1e-12 * scale)
          << what << " id=" << mine.ids[i];
    EXPECT_NEAR(energy, expected_energy, 1e-12 * std::abs(expected_energy)) << what;
  }
}

// Ranks whose slabs are thinner than the ghosts need are refused on every rank, with the numbers.
TEST(DistributedParticleMeshSumMpi, RefusesSlabsThinnerThanItsGhosts) {
  const Eigen::VectorXd lower = Eigen::VectorXd::Constant(2, -1.0),
                        upper = Eigen::VectorXd::Constant(2, 1.0);
  const Eigen::VectorXi cells(Eigen::Vector2i(16, 6));
  const SlabDecomposition slabs(0.0, 1.0, 6, world(MPI_Comm_size));
  bool too_thin = false;  // near range 2: three planes per rank with planes
  for (int r = 0; r < slabs.ranks(); ++r)
    too_thin = too_thin || (slabs.plane_count(r) > 0 && slabs.plane_count(r) < 3);
  bool refused = false;
  try {
    DistributedParticleMeshSum sum(InteractionKernel::log(), lower, upper, cells, 2,
                                   MPI_COMM_WORLD);
  } catch (const std::invalid_argument& e) {
    refused = true;
    EXPECT_NE(std::string(e.what()).find("needs at least 3 per rank"), std::string::npos);
  }
  EXPECT_EQ(refused, too_thin);
}

// A Langevin run on the spread mesh sum: the particles migrate between the slabs after every step
// and the ids key the noise, so 20 steps follow the run of one process to rounding.
TEST(DistributedParticleMeshSumMpi, LangevinRunWithMigrationFollowsOneProcess) {
  const long n = 600;
  const int d = 2;
  const Eigen::VectorXd lower = Eigen::VectorXd::Constant(d, -1.0),
                        upper = Eigen::VectorXd::Constant(d, 1.0);
  const Eigen::VectorXi cells(Eigen::Vector2i(32, 32));
  const Domain box = Domain::box(lower, upper);
  const InteractionKernel kernel = InteractionKernel::log();
  const LangevinParameters parameters{2e-3, 20.0, 3, 0};
  const Eigen::MatrixXd all = particles_in_box(n, d);
  Particles whole(all);
  ForceField one(std::make_shared<QuadraticPotential>(1.0),
                 make_particle_mesh_sum(kernel, lower, upper, cells, 2), 1.0);
  LangevinIntegrator single(one, box, parameters);
  Particles mine = share_of(all, true);
  ForceField spread(
      std::make_shared<QuadraticPotential>(1.0),
      std::make_unique<DistributedParticleMeshSum>(kernel, lower, upper, cells, 2, MPI_COMM_WORLD),
      1.0);
  spread.redistribute(mine);
  LangevinIntegrator distributed(spread, box, parameters);
  for (int step = 0; step < 20; ++step) {
    single.step(whole);
    distributed.step(mine);
  }
  EXPECT_GT((whole.positions - all).norm(), 1e-2);
  const RankGroup ranks(MPI_COMM_WORLD);
  Eigen::MatrixXd gathered;
  ranks.gather_by_id(mine.ids, mine.positions, gathered);
  if (ranks.first()) {
    EXPECT_LE((gathered - whole.positions).cwiseAbs().maxCoeff(), 1e-10);
  }
}

}  // namespace
}  // namespace cpm
