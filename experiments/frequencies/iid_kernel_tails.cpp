#include "experiments/frequencies/iid_kernel_tails.hpp"

#include <algorithm>
#include <cmath>

namespace cpm {

IidKernelTails::IidKernelTails(const Eigen::MatrixXd& x, double sigma) {
  const Eigen::Index n = x.rows();
  double kernel_square = 0.0, variance = 0.0;
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      // E cos(ωᵀΔ) = k(Δ) = exp(−σ²|Δ|²/2) and E cos² = (1 + k(2Δ))/2.
      const double r2 = (x.row(i) - x.row(j)).squaredNorm() * sigma * sigma;
      const double k = std::exp(-0.5 * r2), k2 = std::exp(-2.0 * r2);
      kernel_square += k * k;
      variance += 0.5 * (1.0 + k2) - k * k;
    }
  scaled_mean_square_ = variance / kernel_square;
  mcdiarmid_factor_ = kernel_square / (static_cast<double>(n) * static_cast<double>(n));
}

double IidKernelTails::tail_bound(double n_features, double delta) const {
  const double excess = std::max(0.0, delta - std::sqrt(scaled_mean_square_ / n_features));
  return std::exp(-0.5 * n_features * excess * excess * mcdiarmid_factor_);
}

}  // namespace cpm
