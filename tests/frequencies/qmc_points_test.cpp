#include "frequencies/qmc_points.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace cpm {
namespace {

TEST(QmcPoints, SobolStartsWithTheJoeKuoSequence) {
  // The first seven points in three coordinates (Joe & Kuo's direction numbers; the same as
  // scipy.stats.qmc.Sobol(3, scramble=False)).
  const double expected[7][3] = {{0.0, 0.0, 0.0},      {0.5, 0.5, 0.5},       {0.75, 0.25, 0.25},
                                 {0.25, 0.75, 0.75},   {0.375, 0.375, 0.625}, {0.875, 0.875, 0.125},
                                 {0.625, 0.125, 0.875}};
  const Eigen::MatrixXd u = sobol_points(7, 3);
  for (int i = 0; i < 7; ++i)
    for (int a = 0; a < 3; ++a) EXPECT_EQ(u(i, a), expected[i][a]) << i << "," << a;
}

TEST(QmcPoints, HaltonIsTheRadicalInverseInPrimeBases) {
  const Eigen::MatrixXd u = halton_points(6, 3);
  const double base2[] = {0.0, 0.5, 0.25, 0.75, 0.125, 0.625};
  const double base3[] = {0.0, 1.0 / 3, 2.0 / 3, 1.0 / 9, 4.0 / 9, 7.0 / 9};
  const double base5[] = {0.0, 0.2, 0.4, 0.6, 0.8, 0.04};
  for (int i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(u(i, 0), base2[i]);
    EXPECT_DOUBLE_EQ(u(i, 1), base3[i]);
    EXPECT_DOUBLE_EQ(u(i, 2), base5[i]);
  }
  EXPECT_EQ(halton_points(2, 10)(1, 9), 1.0 / 29);  // the tenth prime
}

// n = 2^m randomised points keep one point in each interval [j/n, (j+1)/n) of every coordinate.
void expect_stratified(const Eigen::MatrixXd& u, const char* what) {
  const auto n = u.rows();
  for (Eigen::Index a = 0; a < u.cols(); ++a) {
    std::vector<int> count(static_cast<std::size_t>(n), 0);
    for (Eigen::Index i = 0; i < n; ++i) {
      ASSERT_GT(u(i, a), 0.0) << what;
      ASSERT_LT(u(i, a), 1.0) << what;
      ++count[static_cast<std::size_t>(u(i, a) * static_cast<double>(n))];
    }
    for (int c : count) ASSERT_EQ(c, 1) << what << " coordinate " << a;
  }
}

TEST(QmcPoints, RandomisationsKeepTheStratificationOfEachCoordinate) {
  expect_stratified(shifted_sobol_points(256, 8, 3, 0), "sobol");
  // Halton's first coordinate is van der Corput's sequence in base 2.
  expect_stratified(shifted_halton_points(256, 1, 3, 0), "halton");
}

TEST(QmcPoints, RandomisedPointsDependOnTheSeedAndReplicaOnly) {
  EXPECT_EQ(shifted_sobol_points(64, 5, 7, 2), shifted_sobol_points(64, 5, 7, 2));
  EXPECT_NE(shifted_sobol_points(64, 5, 7, 2), shifted_sobol_points(64, 5, 7, 3));
  EXPECT_NE(shifted_halton_points(64, 5, 7, 2), shifted_halton_points(64, 5, 7, 1));
}

// The randomised rules are unbiased: over replicas, the mean of their estimates of ∫ f = 1 for
// f(u) = Π_a (1 + g(u_a)), g(u) = sin(2πu)/2 + u − ½, is the integral within the replicas'
// standard error, while each estimate is far more accurate than plain Monte Carlo (whose
// standard deviation is sd(f)/√n, sd(f) = ((1 + E g²)⁴ − 1)^{1/2} ≈ 0.46, E g² = 5/24 − 1/(2π)).
TEST(QmcPoints, RandomisedRulesAreUnbiasedAndBeatMonteCarlo) {
  const int d = 4, n = 1024, replicas = 64;
  auto f = [&](const Eigen::MatrixXd& u, Eigen::Index i) {
    double v = 1.0;
    for (int a = 0; a < d; ++a)
      v *= 1.0 + 0.5 * std::sin(6.283185307179586 * u(i, a)) + u(i, a) - 0.5;
    return v;
  };
  for (int method = 0; method < 2; ++method) {
    double mean = 0.0, square = 0.0;
    for (int r = 0; r < replicas; ++r) {
      const Eigen::MatrixXd u =
          method == 0 ? shifted_sobol_points(n, d, 11, r) : shifted_halton_points(n, d, 11, r);
      double estimate = 0.0;
      for (Eigen::Index i = 0; i < n; ++i) estimate += f(u, i);
      estimate /= n;
      mean += estimate / replicas;
      square += (estimate - 1.0) * (estimate - 1.0) / replicas;
    }
    const double rms = std::sqrt(square);
    const double g2 = 5.0 / 24.0 - 1.0 / 6.283185307179586;
    const double monte_carlo = std::sqrt(std::pow(1.0 + g2, d) - 1.0) / std::sqrt(double{n});
    std::printf("randomised %s, n = %d, d = %d: RMS error %.2e, plain Monte Carlo %.2e\n",
                method == 0 ? "Sobol'" : "Halton", n, d, rms, monte_carlo);
    EXPECT_LT(rms, 0.2 * monte_carlo) << method;
    EXPECT_NEAR(mean, 1.0, 4.0 * rms / std::sqrt(static_cast<double>(replicas))) << method;
  }
}

}  // namespace
}  // namespace cpm
