#include "physics/riesz_kernel.hpp"

#include <gtest/gtest.h>

#include <random>

namespace cpm {
namespace {

// ∇W(z) equals the central finite difference of W, coordinate by coordinate.
template <class Evaluator>
void expect_gradient_matches_finite_difference(const Evaluator& w, int d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd z(d);
    for (int a = 0; a < d; ++a) z[a] = normal(rng);
    const Eigen::VectorXd g = kernel_gradient(w, z);
    const double h = 1e-6 * z.norm();
    for (int a = 0; a < d; ++a) {
      Eigen::VectorXd zp = z, zm = z;
      zp[a] += h;
      zm[a] -= h;
      const double fd = (kernel_value(w, zp) - kernel_value(w, zm)) / (2 * h);
      EXPECT_NEAR(g[a], fd, 1e-6 * (1.0 + std::abs(fd))) << "d=" << d << " a=" << a;
    }
  }
}

TEST(RieszKernel, EveryKernelGradientEqualsCentralFiniteDifferenceOfItsValue) {
  for (int d : {1, 2, 3}) {
    for (double s : {-1.5, -1.0, -0.3, 0.5, 1.0, 1.2, 2.5})
      expect_gradient_matches_finite_difference(RieszPower{s}, d, 1);
    expect_gradient_matches_finite_difference(RieszLog{}, d, 2);
    expect_gradient_matches_finite_difference(RieszMollified{0.5, 0.01}, d, 3);
    expect_gradient_matches_finite_difference(RieszMollified{0.0, 0.04}, d, 4);
    expect_gradient_matches_finite_difference(QuadraticPair{0.7}, d, 5);
    expect_gradient_matches_finite_difference(AbsolutePair{1.3}, d, 6);
  }
  expect_gradient_matches_finite_difference(RieszLinear{}, 1, 7);
}

TEST(RieszKernel, ValuesAreTheStatedFormulas) {
  const Eigen::Vector2d z(0.3, -0.4);  // |z| = 0.5
  EXPECT_NEAR(kernel_value(RieszPower{0.5}, z), std::pow(0.5, -0.5), 1e-15);
  EXPECT_NEAR(kernel_value(RieszPower{-1.5}, z), -std::pow(0.5, 1.5), 1e-15);
  EXPECT_NEAR(kernel_value(RieszPower{-1.0}, z), kernel_value(RieszLinear{}, z), 1e-15);
  EXPECT_NEAR(kernel_value(RieszLog{}, z), -std::log(0.5), 1e-15);
  EXPECT_NEAR(kernel_value(RieszMollified{1.0, 0.09}, z), 1.0 / std::sqrt(0.25 + 0.09), 1e-15);
  EXPECT_NEAR(kernel_value(QuadraticPair{2.0}, z), 0.25, 1e-15);
  EXPECT_NEAR(kernel_value(RieszLinear{}, Eigen::VectorXd::Constant(1, -0.5)), -0.5, 1e-15);
}

TEST(RieszKernel, VisitDispatchesTheRightEvaluator) {
  const Eigen::Vector2d z(0.3, -0.4);
  auto value = [&](const InteractionKernel& k) {
    return visit(k, [&](auto w) { return kernel_value(w, z); });
  };
  EXPECT_NEAR(value(InteractionKernel::power(0.5)), std::pow(0.5, -0.5), 1e-15);
  EXPECT_NEAR(value(InteractionKernel::log()), -std::log(0.5), 1e-15);
  EXPECT_NEAR(value(InteractionKernel::linear()), -0.5, 1e-15);
  EXPECT_NEAR(value(InteractionKernel::mollified(1.0, 0.3)), 1.0 / std::sqrt(0.34), 1e-15);
  EXPECT_NEAR(value(InteractionKernel::quadratic(2.0)), 0.25, 1e-15);
  EXPECT_NEAR(value(InteractionKernel::absolute(2.0)), 1.0, 1e-15);
  EXPECT_EQ(value(InteractionKernel::none()), 0.0);
  EXPECT_NEAR(value(InteractionKernel::power(-0.5)), -std::pow(0.5, 0.5), 1e-15);
  // sgn(s)|z|^{-s} needs −2 < s, s ≠ 0 (s = 0 is the log kind).
  EXPECT_THROW(value(InteractionKernel::power(0.0)), std::invalid_argument);
  EXPECT_THROW(value(InteractionKernel::power(-2.0)), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
