#pragma once
// The potential U = W ∗ p of a Riesz kernel against the Gaussian law p = N(0, σ² I_d)
// (docs/features.md §2): U(ω) = E W(ω − Z), Z ~ p, a radial function of r = |ω|, in closed form.
//
// With z = r²/(2σ²), |ω − Z|²/σ² is non-central χ²_d with non-centrality 2z, whose moments give
//     sgn(s)|·|^{−s}:  U = sgn(s) σ^{−s} 2^{−s/2} Γ((d−s)/2)/Γ(d/2) ₁F₁(s/2; d/2; −z),
//                      ∇U(ω) = −(s/d) (C/σ²) ₁F₁(s/2 + 1; d/2 + 1; −z) ω   (C the prefactor),
// for −2 < s < d, s ≠ 0, and, as the limit (|z|^{−s} − 1)/s → −log|z|,
//     −log|·|:         ∇U(ω) = −(1/(d σ²)) ₁F₁(1; d/2 + 1; −z) ω,
//                      U = −½[log(2σ²) + ψ(d/2)] − (1/d) ∫_0^z ₁F₁(1; d/2 + 1; −u) du,
// the integral in closed form for d = 2 (U = −½[log r² + E₁(z)]) and by Gauss–Kronrod otherwise.
// For d = 3, s = 1 (Coulomb) U = erf(r/(σ√2))/r, Newton's theorem. U is smooth at ω = 0 even
// where W is singular. For z ≥ max(1000, 8b²) the ₁F₁ come from their asymptotic series and the log
// kernel's U from U = −½ log r² + ½ Σ_k (1 − d/2)_k/(k z^k) (docs/features.md §2): Boost's ₁F₁
// loses six digits by z ~ 1e6, where the heavy tails of the Laplace kernel's law (§6) reach.
#include <Eigen/Dense>

#include "frequencies/radial_convolution.hpp"
#include "physics/riesz_kernel.hpp"

namespace cpm {

class RieszPotentialOfGaussian final : public RadialConvolution {
 public:
  // `kernel`: the power kind with −2 < s < d, s ≠ 0, log, or linear (s = −1); σ > 0.
  // Throws std::invalid_argument for any other kernel.
  RieszPotentialOfGaussian(const InteractionKernel& kernel, int dim, double sigma);

  double value_r2(double r2) const override;
  double gradient_factor(double r2) const override;

  // ∫∫ W(x − y) p(dx) p(dy) = E W(Z − Z'): U at 0 for the law N(0, 2σ² I).
  double self_energy() const;

  int dim() const override { return d_; }
  double sigma() const override { return sigma_; }

 private:
  bool log_ = false;
  double s_ = 0.0;
  int d_;
  double sigma_;
  double prefactor_ = 0.0;  // C (power) or U(0) (log)
};

}  // namespace cpm
