#include "solvers/distributed_pair_sum.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "core/domain.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/force_field.hpp"
#include "solvers/langevin.hpp"

namespace cpm {
namespace {

int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  query(MPI_COMM_WORLD, &value);
  return value;
}

// N particles in d dimensions, the same on every rank.
Eigen::MatrixXd all_particles(long n, int d) {
  Eigen::MatrixXd x(n, d);
  for (long k = 0; k < n; ++k) {
    RandomStream stream(11, RandomPurpose::test_inputs, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) x(k, a) = stream.normal();
  }
  return x;
}

// This rank's share: ids k with k mod P = rank, or, `uneven`, the first half of the particles
// on the last rank and the rest spread over the others (some shares empty when N < P).
Particles share_of(const Eigen::MatrixXd& all, bool uneven) {
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  const long n = all.rows();
  Particles p;
  for (long k = 0; k < n; ++k) {
    const int owner = uneven ? (k < n / 2 ? ranks - 1 : static_cast<int>(k % ranks))
                             : static_cast<int>(k % ranks);
    if (owner == rank) p.ids.push_back(static_cast<std::uint64_t>(k));
  }
  p.positions.resize(static_cast<Eigen::Index>(p.ids.size()), all.cols());
  for (Eigen::Index i = 0; i < p.positions.rows(); ++i)
    p.positions.row(i) = all.row(static_cast<Eigen::Index>(p.ids[i]));
  return p;
}

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
