#pragma once
// Central finite differences in double precision for the backward-pass tests: the loss is
// ℓ = Σ g ⊙ f(θ) for a fixed random weight g, so one scalar checks every output at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/random_stream.hpp"

namespace cpm::testing {

inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  RandomStream s(seed, RandomPurpose::test_inputs, 0, 0);
  std::vector<double> v(n);
  for (auto& x : v) x = scale * s.normal();
  return v;
}

// Checks analytic[i] ≈ (ℓ(θ + h e_i) − ℓ(θ − h e_i)) / 2h for every i of theta, with
// |a − fd| ≤ tolerance · max(1, |fd|). `loss` reads theta.
inline void expect_gradient(std::vector<double>& theta, const std::vector<double>& analytic,
                            const std::function<double()>& loss, const std::string& what,
                            double tolerance = 1e-6, double h = 1e-5) {
  ASSERT_EQ(theta.size(), analytic.size()) << what;
  double worst = 0.0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double saved = theta[i];
    theta[i] = saved + h;
    const double plus = loss();
    theta[i] = saved - h;
    const double minus = loss();
    theta[i] = saved;
    const double fd = (plus - minus) / (2 * h);
    const double error = std::abs(analytic[i] - fd) / std::max(1.0, std::abs(fd));
    worst = std::max(worst, error);
    EXPECT_LE(error, tolerance) << what << "[" << i << "]: analytic " << analytic[i] << " vs FD "
                                << fd;
  }
  ::testing::Test::RecordProperty(what + "_worst_relative_error", std::to_string(worst));
  std::printf("  %s: worst relative error %.2e over %zu entries\n", what.c_str(), worst,
              theta.size());
}

inline double weighted_sum(const double* y, const std::vector<double>& g) {
  double s = 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) s += y[i] * g[i];
  return s;
}

}  // namespace cpm::testing
