#include "solvers/langevin.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "core/initial_law.hpp"
#include "core/observables.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/gradient_flow.hpp"

namespace cpm {
namespace {

Particles run_langevin_with_threads(int threads) {
  omp_set_num_threads(threads);
  InitialLaw law;
  law.centre = Eigen::Vector2d(0.2, -0.1);
  law.scale = 0.5;
  // Enough particles (N·d above the step's threading threshold) that two threads share a step.
  Particles p = sample_particles(law, 4200, 17, 2);
  ForceField forces(std::make_shared<QuadraticPotential>(1.0),
                    make_blocked_pair_sum(InteractionKernel::mollified(1.0, 0.05)), 1.0);
  LangevinIntegrator langevin(forces, Domain::ball(Eigen::Vector2d::Zero(), 0.8),
                              LangevinParameters{1e-3, 20.0, 17, 2});
  langevin.advance_to(p, 0.02);
  return p;
}

TEST(Langevin, TrajectoriesAreBitIdenticalForOneAndTwoThreads) {
  const int saved = omp_get_max_threads();
  const Particles one = run_langevin_with_threads(1);
  const Particles two = run_langevin_with_threads(2);
  omp_set_num_threads(saved);
  ASSERT_EQ(one.positions.rows(), two.positions.rows());
  EXPECT_TRUE((one.positions.array() == two.positions.array()).all());
  // The run moved the particles and the projection kept them in the ball.
  EXPECT_LE(radial_extent(one.positions, Eigen::Vector2d::Zero()), 0.8 + 1e-12);
}

TEST(Langevin, DifferentSeedsGiveDifferentTrajectories) {
  InitialLaw law;
  law.centre = Eigen::VectorXd::Zero(1);
  Particles a = sample_particles(law, 50, 1, 0), b = a;
  ForceField forces(std::make_shared<ZeroPotential>(),
                    make_reference_pair_sum(InteractionKernel::none()), 0.0);
  LangevinIntegrator la(forces, Domain::whole_space(1), LangevinParameters{1e-2, 1.0, 1, 0});
  LangevinIntegrator lb(forces, Domain::whole_space(1), LangevinParameters{1e-2, 1.0, 2, 0});
  la.advance_to(a, 0.1);
  lb.advance_to(b, 0.1);
  EXPECT_GT((a.positions - b.positions).norm(), 0.1);
}

// The noise is keyed by particle id, not by row: the same particles stored in another row order
// (ids saying which is which, as a rank of a distributed run holds them) follow the same paths,
// bit for bit, without interaction (whose sums would change order with the rows).
TEST(Langevin, NoiseFollowsTheParticleIdNotTheRow) {
  InitialLaw law;
  law.centre = Eigen::Vector2d::Zero();
  Particles natural = sample_particles(law, 64, 5, 0);
  Particles reversed;
  reversed.positions = natural.positions.colwise().reverse();
  for (std::uint64_t k = 0; k < 64; ++k) reversed.ids.push_back(63 - k);
  ForceField forces(std::make_shared<QuadraticPotential>(1.0),
                    make_reference_pair_sum(InteractionKernel::none()), 0.0);
  LangevinIntegrator a(forces, Domain::whole_space(2), LangevinParameters{1e-2, 2.0, 5, 0});
  LangevinIntegrator b(forces, Domain::whole_space(2), LangevinParameters{1e-2, 2.0, 5, 0});
  const Eigen::MatrixXd start = natural.positions;
  a.advance_to(natural, 0.1);
  b.advance_to(reversed, 0.1);
  EXPECT_GT((natural.positions - start).norm(), 0.1);
  for (Eigen::Index j = 0; j < 64; ++j)
    EXPECT_EQ(Eigen::RowVector2d(reversed.positions.row(j)),
              Eigen::RowVector2d(natural.positions.row(static_cast<Eigen::Index>(reversed.id(j)))))
        << j;
}

// docs/exact_solutions.md §2: V = a|x|²/2, W = κ|z|²/2. For N particles the centre of mass x̄ is an
// Ornstein–Uhlenbeck process with rate a and noise √(2/(βN)); the deviations x_k − x̄ relax at
// rate a + κ to covariance (1 − 1/N) Σ∞, Σ∞ = I/(β(a + κ)), so
//   E x̄(t) = m0 e^{−at},   E Ĉ(t) = (1 − 1/N) [Σ∞ + (C0 − Σ∞) e^{−2(a+κ)t}].
// Replicas are independent; the comparison allows 4 standard errors.
void check_gaussian_case(int d) {
  const double a = 1.0, kappa = 0.5, beta = 4.0, sigma0 = 0.3, eta = 2e-3;
  const int n = 250, replicas = 32;
  const Eigen::VectorXd m0 = Eigen::VectorXd::LinSpaced(d, 1.0, -0.5);
  const double sigma_inf2 = 1.0 / (beta * (a + kappa));
  const std::vector<double> times = {0.25, 0.5, 1.0};
  std::vector<std::vector<Eigen::VectorXd>> means(times.size());
  std::vector<std::vector<Eigen::MatrixXd>> covs(times.size());
  for (int r = 0; r < replicas; ++r) {
    InitialLaw law;
    law.centre = m0;
    law.scale = sigma0;
    Particles p = sample_particles(law, n, 2024, r);
    ForceField forces(std::make_shared<QuadraticPotential>(a),
                      make_reference_pair_sum(InteractionKernel::quadratic(kappa)), 1.0);
    LangevinIntegrator langevin(forces, Domain::whole_space(d),
                                LangevinParameters{eta, beta, 2024, static_cast<std::uint64_t>(r)});
    for (std::size_t i = 0; i < times.size(); ++i) {
      langevin.advance_to(p, times[i]);
      means[i].push_back(ensemble_mean(p.positions));
      covs[i].push_back(ensemble_covariance(p.positions));
    }
  }
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    const double var_mean =
        sigma0 * sigma0 / n * std::exp(-2 * a * t) + (1 - std::exp(-2 * a * t)) / (beta * n * a);
    const double c_expected = (1.0 - 1.0 / n) * (sigma_inf2 + (sigma0 * sigma0 - sigma_inf2) *
                                                                  std::exp(-2 * (a + kappa) * t));
    for (int j = 0; j < d; ++j) {
      double mean_avg = 0, cov_avg = 0;
      for (int r = 0; r < replicas; ++r) {
        mean_avg += means[i][r][j] / replicas;
        cov_avg += covs[i][r](j, j) / replicas;
      }
      EXPECT_NEAR(mean_avg, m0[j] * std::exp(-a * t), 4 * std::sqrt(var_mean / replicas))
          << "d=" << d << " t=" << t;
      // Var of a Gaussian sample variance ≈ 2σ⁴/N.
      EXPECT_NEAR(cov_avg, c_expected, 4 * c_expected * std::sqrt(2.0 / (n * replicas)))
          << "d=" << d << " t=" << t;
      std::printf("d=%d t=%.2f coordinate %d: mean %.5f (exact %.5f), variance %.5f (exact %.5f)\n",
                  d, t, j, mean_avg, m0[j] * std::exp(-a * t), cov_avg, c_expected);
    }
    if (d == 2) {  // off-diagonal covariance vanishes
      double off = 0;
      for (int r = 0; r < replicas; ++r) off += covs[i][r](0, 1) / replicas;
      EXPECT_NEAR(off, 0.0, 4 * c_expected * std::sqrt(1.0 / (n * replicas)));
    }
  }
}

TEST(Langevin, GaussianCaseMeanAndCovarianceMatchExactFormulasIn1D) {
  check_gaussian_case(1);
}
TEST(Langevin, GaussianCaseMeanAndCovarianceMatchExactFormulasIn2D) {
  check_gaussian_case(2);
}

TEST(GradientFlow, BitIdenticalForOneAndTwoThreadsAndEnergyDecreases) {
  const int saved = omp_get_max_threads();
  Eigen::MatrixXd results[2];
  double energies[2][2];
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    InitialLaw law;
    law.centre = Eigen::VectorXd::Zero(1);
    Particles p = sample_particles(law, 80, 5, 0);
    ForceField forces(std::make_shared<QuadraticPotential>(1.0),
                      make_reference_pair_sum(InteractionKernel::log()), 1.0);
    GradientFlowIntegrator flow(forces, Domain::ball(Eigen::VectorXd::Zero(1), 3.0),
                                GradientFlowParameters{});
    energies[threads - 1][0] = forces.energy(p.positions).total();
    flow.advance_to(p, 1.0);
    energies[threads - 1][1] = forces.energy(p.positions).total();
    results[threads - 1] = p.positions;
  }
  omp_set_num_threads(saved);
  EXPECT_TRUE((results[0].array() == results[1].array()).all());
  EXPECT_LT(energies[0][1], energies[0][0]);
}

}  // namespace
}  // namespace cpm
