// Paired statistics against values computed by hand: McNemar's exact p from binomial sums, the
// paired t statistic of a small case and its p from the closed-form t distribution with 3
// degrees of freedom, and the two-level bootstrap on cases whose answer is known.
#include "learning/paired_statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cpm {
namespace {

TEST(McNemar, ExactPValuesAreTwiceTheBinomialTail) {
  // b = 1, c = 9: 2 (C(10,0) + C(10,1)) / 2¹⁰ = 22/1024.
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(1, 9), 22.0 / 1024.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(9, 1), 22.0 / 1024.0);
  // b = 5, c = 20: 2 Σ_{i≤5} C(25, i) / 2²⁵ = 2 · 68406 / 33554432.
  EXPECT_NEAR(mcnemar_exact_p(5, 20), 2.0 * 68406.0 / 33554432.0, 1e-15);
  EXPECT_EQ(mcnemar_exact_p(7, 7), 1.0);
  EXPECT_EQ(mcnemar_exact_p(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 1), 1.0);  // 2 · 1/2 = 1
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 6), 2.0 / 64.0);
  // Large counts stay finite and small: 400 against 500 discordant examples, and past the
  // recurrence's range (n > 1000) the log-gamma terms agree with the normal approximation's order.
  const double p = mcnemar_exact_p(400, 500);
  EXPECT_GT(p, 0.0);
  EXPECT_LT(p, 0.002);
  const double q = mcnemar_exact_p(600, 700);  // z = 100/√1300 = 2.77: p ≈ 0.0056
  EXPECT_GT(q, 0.004);
  EXPECT_LT(q, 0.008);
  EXPECT_NEAR(mcnemar_exact_p(500, 500), 1.0, 0.0);
  EXPECT_NEAR(mcnemar_exact_p(495, 506), mcnemar_exact_p(506, 495), 1e-15);
}

TEST(McNemar, CountsTheDiscordantExamples) {
  const std::vector<bool> a = {true, true, false, false, true, false};
  const std::vector<bool> b = {true, false, true, false, false, false};
  const McNemarCounts c = mcnemar_counts(a, b);
  EXPECT_EQ(c.a_only, 2);
  EXPECT_EQ(c.b_only, 1);
  EXPECT_THROW(mcnemar_counts(a, {true}), std::invalid_argument);
}

TEST(PairedT, MatchesAHandComputedCase) {
  // d = (0.02, 0.02, −0.01, 0.02): mean 0.0125, sd 0.015, t = 0.0125 / (0.015/2) = 5/3.
  const PairedTTest r = paired_t_test({0.80, 0.82, 0.79, 0.81}, {0.78, 0.80, 0.80, 0.79});
  EXPECT_EQ(r.n, 4);
  EXPECT_NEAR(r.mean, 0.0125, 1e-15);
  EXPECT_NEAR(r.sd, 0.015, 1e-15);
  EXPECT_NEAR(r.t, 5.0 / 3.0, 1e-12);
  // Student's t with 3 d.o.f.: F(t) = 1/2 + (u/(1 + t²/3) + atan u)/π, u = t/√3.
  const double u = r.t / std::sqrt(3.0);
  const double cdf = 0.5 + (u / (1.0 + r.t * r.t / 3.0) + std::atan(u)) / M_PI;
  EXPECT_NEAR(r.p, 2.0 * (1.0 - cdf), 1e-12);
  EXPECT_NEAR(r.p, 0.19417134561, 1e-10);
}

TEST(PairedT, TheTabulatedCriticalValueGivesFivePercent) {
  // t_{0.975}(4) = 2.7764451: five differences with mean/(sd/√5) equal to it.
  const double t = 2.7764451051977987, sd = 1.0;
  std::vector<double> d = {-2, -1, 0, 1, 2};  // sd √2.5
  for (double& x : d) x = x / std::sqrt(2.5) * sd + t * sd / std::sqrt(5.0);
  const PairedTTest r = paired_t_test(d);
  EXPECT_NEAR(r.t, t, 1e-12);
  EXPECT_NEAR(r.p, 0.05, 1e-9);
  EXPECT_THROW(paired_t_test(std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_EQ(paired_t_test({0.0, 0.0, 0.0}).p, 1.0);
}

TEST(TwoLevelBootstrap, ConstantDifferencesGiveAPointAndNoiseGivesAnIntervalAroundTheMean) {
  const std::vector<std::vector<double>> constant(4, std::vector<double>(50, 0.25));
  const Interval c = two_level_bootstrap_interval(constant, 200, 0.95, 1);
  EXPECT_DOUBLE_EQ(c.lower, 0.25);
  EXPECT_DOUBLE_EQ(c.upper, 0.25);
  // Per-example differences in {−1, 0, 1}; the seeds' means differ. The interval contains the
  // overall mean and is narrower than the range of the seed means.
  std::vector<std::vector<double>> d(6);
  double total = 0.0;
  for (int s = 0; s < 6; ++s) {
    for (int i = 0; i < 300; ++i) d[s].push_back(((i * 7 + s * 3) % 10 < 2 + s % 3) ? 1.0 : 0.0);
    for (int i = 0; i < 100; ++i) d[s].push_back(-1.0);
  }
  std::vector<double> seed_means;
  for (const auto& v : d) {
    double m = 0.0;
    for (double x : v) m += x;
    seed_means.push_back(m / v.size());
    total += m / v.size();
  }
  const double mean = total / 6.0;
  const Interval i = two_level_bootstrap_interval(d, 2000, 0.95, 7);
  EXPECT_LT(i.lower, mean);
  EXPECT_GT(i.upper, mean);
  EXPECT_LT(i.upper - i.lower, 0.2);
  // The same seed gives the same interval; a wider level a wider one.
  const Interval again = two_level_bootstrap_interval(d, 2000, 0.95, 7);
  EXPECT_EQ(again.lower, i.lower);
  EXPECT_EQ(again.upper, i.upper);
  const Interval wide = two_level_bootstrap_interval(d, 2000, 0.99, 7);
  EXPECT_LE(wide.lower, i.lower);
  EXPECT_GE(wide.upper, i.upper);
}

}  // namespace
}  // namespace cpm
