#include "experiments/studies/rate_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cpm {
namespace {

// Synthetic distances C N^{slope} times independent log-normal noise, R replicas per N.
std::vector<std::vector<double>> synthetic(const std::vector<double>& ns, double slope,
                                           int replicas, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> samples(ns.size());
  for (std::size_t i = 0; i < ns.size(); ++i)
    for (int r = 0; r < replicas; ++r)
      samples[i].push_back(0.8 * std::pow(ns[i], slope) * std::exp(noise * normal(rng)));
  return samples;
}

TEST(RateFit, LeastSquaresRecoversAnExactLine) {
  double slope, intercept;
  least_squares_line({1, 2, 3, 4}, {1.5, 1.0, 0.5, 0.0}, slope, intercept);
  EXPECT_NEAR(slope, -0.5, 1e-14);
  EXPECT_NEAR(intercept, 2.0, 1e-14);
}

TEST(RateFit, BootstrapSlopeRecoversAKnownSlopeWithinItsInterval) {
  const std::vector<double> ns = {100, 300, 1000, 3000, 10000};
  const RateFit fit = fit_rate(ns, synthetic(ns, -0.5, 16, 0.3, 1), 1000, 0.99, 7);
  std::printf("slope %.4f, 99%% interval [%.4f, %.4f]\n", fit.slope, fit.slope_low, fit.slope_high);
  EXPECT_LE(fit.slope_low, -0.5);
  EXPECT_GE(fit.slope_high, -0.5);
  EXPECT_NEAR(fit.slope, -0.5, 0.05);
  EXPECT_LT(fit.slope_high - fit.slope_low, 0.2);
}

TEST(RateFit, IntervalCoverageIsCloseToNominal) {
  // Over 100 independent synthetic studies the 90% interval must contain the truth about 90% of
  // the time (binomial standard deviation 3%; the bootstrap is slightly narrow for 8 replicas).
  const std::vector<double> ns = {100, 1000, 10000};
  int covered = 0;
  for (unsigned study = 0; study < 100; ++study) {
    const RateFit fit = fit_rate(ns, synthetic(ns, -1.0, 8, 0.4, 100 + study), 400, 0.9, study);
    covered += fit.slope_low <= -1.0 && -1.0 <= fit.slope_high;
  }
  std::printf("coverage of the 90%% interval: %d/100\n", covered);
  EXPECT_GE(covered, 78);
  EXPECT_LE(covered, 99);
}

TEST(RateFit, ResamplingIsReproducibleForASeed) {
  const std::vector<double> ns = {10, 100};
  const auto samples = synthetic(ns, -0.5, 5, 0.2, 3);
  const RateFit a = fit_rate(ns, samples, 200, 0.95, 11), b = fit_rate(ns, samples, 200, 0.95, 11);
  EXPECT_EQ(a.slope_low, b.slope_low);
  EXPECT_EQ(a.slope_high, b.slope_high);
}

}  // namespace
}  // namespace cpm
