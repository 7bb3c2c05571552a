#pragma once
// Shared pieces of the interaction-sum tests: one evaluation, random configurations, the list of
// every kernel kind, norm-wise relative errors, and the check that a gradient is that of an energy.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/random_stream.hpp"
#include "physics/riesz_kernel.hpp"
#include "solvers/interaction_sum.hpp"

namespace cpm::test {

// One evaluation of a sum: the gradient Σ_{l≠k} ∇W(x_k − x_l) and the pair energy.
struct PairSumResult {
  Eigen::MatrixXd gradient;
  double energy = 0.0;
};

inline PairSumResult evaluate(InteractionSum& sum, const Eigen::MatrixXd& x) {
  PairSumResult r{Eigen::MatrixXd(x.rows(), x.cols())};
  sum.compute(x, r.gradient, &r.energy);
  return r;
}

// n points uniform in [−scale, scale]^d, reproducible from the seed.
inline Eigen::MatrixXd random_points(Eigen::Index n, int d, std::uint64_t seed,
                                     double scale = 1.0) {
  Eigen::MatrixXd x(n, d);
  for (Eigen::Index k = 0; k < n; ++k) {
    RandomStream stream(seed, RandomPurpose::test_inputs, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) x(k, a) = scale * (2.0 * stream.uniform() - 1.0);
  }
  return x;
}

// Every kind the pair sums evaluate, with each special-cased power exponent (0.5, 1; each has its
// own SIMD evaluator), a generic one and a negative one (−|z|^{1.4}), the mollified kernel over
// the log and those powers. The linear kernel −|z| is defined in one dimension only.
inline std::vector<InteractionKernel> every_kernel(int d) {
  using K = InteractionKernel;
  std::vector<K> kernels = {K::power(0.5),
                            K::power(1.0),
                            K::power(1.3),
                            K::power(-1.4),
                            K::log(),
                            K::mollified(0.0, 0.1),
                            K::mollified(0.5, 0.1),
                            K::mollified(1.0, 0.2),
                            K::mollified(1.7, 0.05),
                            K::quadratic(0.7),
                            K::absolute(1.3),
                            K::none()};
  if (d == 1) kernels.push_back(K::linear());
  return kernels;
}

// ‖a − b‖ / ‖b‖ (Frobenius), or ‖a‖ when b vanishes.
inline double relative_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = b.norm();
  return scale > 0.0 ? (a - b).norm() / scale : a.norm();
}
inline double relative_error(double a, double b) {
  return b != 0.0 ? std::abs(a - b) / std::abs(b) : std::abs(a);
}

// Checks that `gradient` is `factor` times the gradient of `energy` at x (OpenMM's two checks).
// Coordinate by coordinate: central differences for the first, middle and last particles, to
// `tolerance` relative to 1 + |difference quotient|.
template <class Energy>
void expect_coordinate_derivatives(const Energy& energy, const Eigen::MatrixXd& x,
                                   const Eigen::MatrixXd& gradient, double factor, double tolerance,
                                   const std::string& what) {
  const Eigen::Index n = x.rows();
  const double h = 1e-6;
  for (Eigen::Index k : {Eigen::Index{0}, n / 2, n - 1}) {
    for (Eigen::Index a = 0; a < x.cols(); ++a) {
      Eigen::MatrixXd xp = x, xm = x;
      xp(k, a) += h;
      xm(k, a) -= h;
      const double fd = factor * (energy(xp) - energy(xm)) / (2 * h);
      EXPECT_NEAR(gradient(k, a), fd, tolerance * (1 + std::abs(fd)))
          << what << " k=" << k << " a=" << a;
    }
  }
}

// Along the gradient g itself, which checks its length: E(x + εg) − E(x − εg) = 2ε‖g‖² / factor,
// to `tolerance` relative. No particle moves by more than 1e-5 of the closest distance (or of 1),
// where the singular kernels vary fastest.
template <class Energy>
void expect_derivative_along_gradient(const Energy& energy, const Eigen::MatrixXd& x,
                                      const Eigen::MatrixXd& gradient, double factor,
                                      double tolerance, const std::string& what) {
  if (gradient.norm() == 0.0) return;  // nothing to move along
  double closest = 1.0;
  for (Eigen::Index k = 0; k < x.rows(); ++k)
    for (Eigen::Index l = k + 1; l < x.rows(); ++l)
      closest = std::min(closest, (x.row(k) - x.row(l)).norm());
  const double step = 1e-5 * closest / std::sqrt(gradient.rowwise().squaredNorm().maxCoeff());
  const double de = energy(x + step * gradient) - energy(x - step * gradient);
  const double expected = 2 * step * gradient.squaredNorm() / factor;
  EXPECT_NEAR(de, expected, tolerance * expected) << what << " along the gradient";
}

}  // namespace cpm::test
