#include "solvers/force_field.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/solvers/pair_sum_test_support.hpp"

namespace cpm {
namespace {

Eigen::MatrixXd random_configuration(int n, int d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(n, d);
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < d; ++a) x(k, a) = normal(rng);
  return x;
}

// F_k = N ∇_{ω_k} E_N, checked against the total energy E_N (pair_sum_test_support.hpp).
void expect_drift_is_gradient_of_energy(const InteractionKernel& kernel, int d, double lambda) {
  const int n = 40;
  ForceField forces(std::make_shared<QuadraticPotential>(0.8), make_reference_pair_sum(kernel),
                    lambda);
  const Eigen::MatrixXd x = random_configuration(n, d, 100 + d);
  Eigen::MatrixXd drift;
  forces.compute(x, drift, nullptr);
  auto energy = [&](const Eigen::MatrixXd& y) { return forces.energy(y).total(); };
  const std::string what = kernel.describe() + " d=" + std::to_string(d);
  test::expect_coordinate_derivatives(energy, x, drift, n, 1e-6, what);
  test::expect_derivative_along_gradient(energy, x, drift, n, 1e-5, what);
}

TEST(ForceField, PairForcesEqualFiniteDifferenceGradientOfTotalEnergy) {
  for (int d : {1, 2, 3, 8}) {
    expect_drift_is_gradient_of_energy(InteractionKernel::power(0.5), d, 1.0);
    expect_drift_is_gradient_of_energy(InteractionKernel::power(-0.7), d, 0.9);
    expect_drift_is_gradient_of_energy(InteractionKernel::log(), d, 0.7);
    expect_drift_is_gradient_of_energy(InteractionKernel::mollified(1.0, 0.1), d, 1.3);
    expect_drift_is_gradient_of_energy(InteractionKernel::quadratic(0.5), d, 1.0);
  }
  expect_drift_is_gradient_of_energy(InteractionKernel::linear(), 1, 1.0);
}

TEST(ForceField, EnergyTermsUseMeanFieldScalingAndExcludeTheSelfTerm) {
  // Two particles at distance 2 under W = |z|^{-1}: E_int = λ/(2N²) · 2 · 1/2.
  Eigen::MatrixXd x(2, 1);
  x << -1.0, 1.0;
  ForceField forces(std::make_shared<QuadraticPotential>(1.0),
                    make_reference_pair_sum(InteractionKernel::power(1.0)), 3.0);
  const EnergyTerms e = forces.energy(x);
  EXPECT_DOUBLE_EQ(e.interaction, 3.0 / 8.0 * 2.0 * 0.5);
  EXPECT_DOUBLE_EQ(e.external, 0.5);
}

}  // namespace
}  // namespace cpm
