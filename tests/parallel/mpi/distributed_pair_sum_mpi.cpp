#include "solvers/distributed_pair_sum.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "core/domain.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/force_field.hpp"
#include "solvers/langevin.hpp"
#include "tests/parallel/mpi/mpi_test_support.hpp"

namespace cpm {
namespace {

// The distributed sum against the blocked sum of one process over all particles, row by row
// (1e-12 relative to the largest row) and in the pair energy, for singular and growing kernels,
// d = 1 to 5, shares even, uneven and empty.
TEST(DistributedPairSumMpi, EqualsTheSumOfOneProcess) {
  struct Case {
    InteractionKernel kernel;
    int d;
    long n;
  };
  for (const Case& c :
       {Case{InteractionKernel::power(1.0), 2, 301}, Case{InteractionKernel::log(), 2, 120},
        Case{InteractionKernel::linear(), 1, 77}, Case{InteractionKernel::power(0.5), 3, 200},
        Case{InteractionKernel::power(-0.5), 5, 90}, Case{InteractionKernel::power(1.0), 2, 3}})
    for (bool uneven : {false, true}) {
      const Eigen::MatrixXd all = all_particles(c.n, c.d);
      Eigen::MatrixXd expected(c.n, c.d);
      double expected_energy = 0.0;
      make_blocked_pair_sum(c.kernel)->compute(all, expected, &expected_energy);
      const Particles mine = share_of(all, uneven);
      Eigen::MatrixXd gradient(mine.positions.rows(), c.d);
      double energy = 0.0;
      DistributedPairSum sum(c.kernel, MPI_COMM_WORLD);
      sum.compute(mine.positions, gradient, &energy);
      const double scale = expected.rowwise().norm().maxCoeff();
      for (Eigen::Index i = 0; i < gradient.rows(); ++i)
        EXPECT_LE((gradient.row(i) - expected.row(static_cast<Eigen::Index>(mine.ids[i]))).norm(),
                  1e-12 * scale)
            << c.kernel.describe() << " d=" << c.d << " id=" << mine.ids[i];
      EXPECT_NEAR(energy, expected_energy, 1e-12 * std::abs(expected_energy))
          << c.kernel.describe() << " d=" << c.d;
      // A second call reuses the buffers and gives the same bits.
      Eigen::MatrixXd again(gradient.rows(), c.d);
      sum.compute(mine.positions, again, nullptr);
      EXPECT_EQ(again, gradient);
    }
}

// One system's Langevin run spread over the ranks: ForceField and the integrator take the
// distributed sum unchanged and the ids key the noise, so 20 steps follow the run of one process
// to rounding (1e-10 relative to the spread of the particles).
TEST(DistributedPairSumMpi, LangevinRunFollowsTheRunOfOneProcess) {
  const long n = 160;
  const int d = 2;
  const Eigen::MatrixXd all = all_particles(n, d);
  const InteractionKernel kernel = InteractionKernel::power(0.5);
  const LangevinParameters parameters{1e-3, 50.0, 3, 0};
  Particles whole(all);
  ForceField one(std::make_shared<QuadraticPotential>(1.0), make_blocked_pair_sum(kernel), 0.02);
  LangevinIntegrator single(one, Domain::whole_space(d), parameters);
  Particles mine = share_of(all, true);
  ForceField spread(std::make_shared<QuadraticPotential>(1.0),
                    std::make_unique<DistributedPairSum>(kernel, MPI_COMM_WORLD), 0.02);
  LangevinIntegrator distributed(spread, Domain::whole_space(d), parameters);
  for (int step = 0; step < 20; ++step) {
    single.step(whole);
    distributed.step(mine);
  }
  EXPECT_GT((whole.positions - all).norm(), 1e-3);
  for (Eigen::Index i = 0; i < mine.positions.rows(); ++i)
    EXPECT_LE((mine.positions.row(i) - whole.positions.row(static_cast<Eigen::Index>(mine.ids[i])))
                  .norm(),
              1e-10)
        << mine.ids[i];
}

}  // namespace
}  // namespace cpm
