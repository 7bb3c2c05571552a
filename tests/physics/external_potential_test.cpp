#include "physics/external_potential.hpp"

#include <gtest/gtest.h>

#include <random>

namespace cpm {
namespace {

void expect_gradient_matches_finite_difference(const ExternalPotential& v, int d) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  const int n = 20;
  Eigen::MatrixXd x(n, d);
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < d; ++a) x(k, a) = normal(rng);
  Eigen::VectorXd value;
  Eigen::MatrixXd gradient;
  v.evaluate(x, value, &gradient);
  const double h = 1e-6;
  for (int k = 0; k < n; ++k) {
    for (int a = 0; a < d; ++a) {
      Eigen::VectorXd p = x.row(k).transpose(), m = p;
      p[a] += h;
      m[a] -= h;
      const double fd = (potential_value(v, p) - potential_value(v, m)) / (2 * h);
      EXPECT_NEAR(gradient(k, a), fd, 1e-7 * (1 + std::abs(fd)));
    }
    EXPECT_DOUBLE_EQ(value[k], potential_value(v, x.row(k).transpose()));
  }
}

TEST(ExternalPotential, QuadraticAndZeroGradientsEqualCentralFiniteDifferences) {
  for (int d : {1, 2, 3, 8}) {
    expect_gradient_matches_finite_difference(QuadraticPotential(1.7), d);
    expect_gradient_matches_finite_difference(
        QuadraticPotential(0.4, Eigen::VectorXd::Constant(d, 0.3)), d);
    expect_gradient_matches_finite_difference(ZeroPotential(), d);
  }
}

TEST(ExternalPotential, QuadraticIsHalfStrengthTimesSquaredDistance) {
  const Eigen::Vector2d p(1.0, 2.0);
  EXPECT_DOUBLE_EQ(potential_value(QuadraticPotential(3.0), p), 7.5);
  EXPECT_DOUBLE_EQ(potential_value(QuadraticPotential(3.0, Eigen::Vector2d(1.0, 1.0)), p), 1.5);
}

}  // namespace
}  // namespace cpm
