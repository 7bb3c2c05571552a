#pragma once
// What is known in closed form about the kernel error of N i.i.d. features (docs/features.md §5).
// For the relative Frobenius error f = ‖K_N − K‖_F / ‖K‖_F on n points, with
// K_N(x, y) = (1/N) Σ_k cos(ω_kᵀ(x − y)) and ω_k ~ N(0, σ² I):
//   E f² = Σ_ij Var cos(ωᵀΔ_ij) / (N ‖K‖²_F),  Var cos(ωᵀΔ) = (1 + k(2Δ))/2 − k(Δ)²,
// exactly, so E f ≤ (E f²)^{1/2}; and McDiarmid's bounded-difference inequality (one ω_k moves
// each entry of K_N by at most 2/N, so f by at most 2n/(N ‖K‖_F)) gives
//   P(f > E f + t) ≤ exp(−N t² ‖K‖²_F / (2 n²)).
#include <Eigen/Dense>

namespace cpm {

class IidKernelTails {
 public:
  // x: (n, d) points of the Gram matrix; σ the kernel's (and p's) scale.
  IidKernelTails(const Eigen::MatrixXd& x, double sigma);

  // N E f², exactly.
  double scaled_mean_square() const { return scaled_mean_square_; }
  // ‖K‖²_F / n², the factor of McDiarmid's exponent.
  double mcdiarmid_factor() const { return mcdiarmid_factor_; }
  // The bound exp(−N (δ − (E f²)^{1/2})₊² ‖K‖²_F / (2n²)) on P(f > δ), at most 1.
  double tail_bound(double n_features, double delta) const;

 private:
  double scaled_mean_square_ = 0.0, mcdiarmid_factor_ = 0.0;
};

}  // namespace cpm
