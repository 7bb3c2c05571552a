// integrate_adaptive: tanh–sinh for smooth integrands and singularities at the ends, bisection
// with Gauss–Legendre where an inner kink or jump keeps tanh–sinh from its tolerance.
#include "core/quadrature.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace cpm {
namespace {

TEST(Quadrature, GaussLegendreIsExactForPolynomialsOfDegreeTwoQMinusOne) {
  for (int q : {1, 3, 10}) {
    const GaussLegendreRule rule = gauss_legendre(q);
    double sum = 0.0;
    for (std::size_t i = 0; i < rule.nodes.size(); ++i)
      sum += rule.weights[i] * std::pow(rule.nodes[i], 2 * q - 2);
    EXPECT_NEAR(sum, 2.0 / (2 * q - 1), 1e-14) << q;
  }
}

TEST(Quadrature, SmoothIntegrandsToTheRequestedTolerance) {
  EXPECT_NEAR(integrate_adaptive([](double x) { return std::exp(x); }, 0.0, 1.0),
              std::numbers::e - 1.0, 1e-13);
  EXPECT_NEAR(integrate_adaptive([](double x) { return 1.0 / (1.0 + x * x); }, -1.0, 1.0),
              std::numbers::pi / 2.0, 1e-13);
  EXPECT_NEAR(integrate_adaptive([](double x) { return std::exp(x); }, 1.0, 0.0),
              1.0 - std::numbers::e, 1e-13);
  EXPECT_EQ(integrate_adaptive([](double) { return 1.0; }, 2.0, 2.0), 0.0);
}

// The kernels' cell integrals: |z|^{-s} and −log|z| are infinite at the end z = 0.
TEST(Quadrature, IntegrableSingularitiesAtTheEnds) {
  EXPECT_NEAR(integrate_adaptive([](double x) { return 1.0 / std::sqrt(x); }, 0.0, 1.0), 2.0,
              1e-12);
  EXPECT_NEAR(integrate_adaptive([](double x) { return -std::log(x); }, 0.0, 1.0), 1.0, 1e-12);
  EXPECT_NEAR(integrate_adaptive([](double x) { return std::pow(x, -0.9); }, 0.0, 0.05),
              std::pow(0.05, 0.1) / 0.1, 1e-11);
}

// Stationary profiles with compact support: the edge of the support inside the interval.
TEST(Quadrature, KinksAndEdgesInsideTheInterval) {
  EXPECT_NEAR(integrate_adaptive([](double x) { return std::abs(x - 0.3); }, -1.0, 1.0),
              0.5 * 1.3 * 1.3 + 0.5 * 0.7 * 0.7, 1e-12);
  const double r = std::sqrt(2.0);
  auto semicircle = [r](double x) {
    return std::sqrt(std::max(0.0, r * r - x * x)) / std::numbers::pi;
  };
  EXPECT_NEAR(integrate_adaptive(semicircle, -2.0, 2.0, 1e-12, 1e-15), 1.0, 1e-10);
}

}  // namespace
}  // namespace cpm
