#pragma once
// Shared pieces of the interaction-sum tests: one evaluation, random configurations, the list of
// every kernel kind, and norm-wise relative errors.
#include <Eigen/Dense>
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
    RandomStream stream(seed, RandomPurpose::experiment, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) x(k, a) = scale * (2.0 * stream.uniform() - 1.0);
  }
  return x;
}

// Every kind the pair sums evaluate, with each special-cased power exponent (0.5, 1; each has its
// own SIMD evaluator) and a generic one, the mollified kernel over the log and those powers. The
// linear kernel −|z| is defined in one dimension only.
inline std::vector<InteractionKernel> every_kernel(int d) {
  using K = InteractionKernel;
  std::vector<K> kernels = {K::power(0.5),
                            K::power(1.0),
                            K::power(1.3),
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

}  // namespace cpm::test
