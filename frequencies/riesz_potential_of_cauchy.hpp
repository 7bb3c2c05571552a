#pragma once
// The potential U = W ∗ p of a Riesz kernel against the multivariate Cauchy law p of scale σ, the
// spectral law of the Laplace kernel exp(−σ|Δ|) (docs/features.md §6). p is the Gaussian scale
// mixture ω = σZ/t, t = |g|, g ~ N(0, 1), so U averages the Gaussian potentials U_{σ/t} of
// frequencies/riesz_potential_of_gaussian.hpp over t; their homogeneity
//     U_{σ'}(r²) = σ'^{−s} U_1(r²/σ'²)        (log kernel: U_1(r²/σ'²) − log σ')
// gives, with u = r²/σ²,
//     U(r²) = σ^{−s} E_t[t^s U_1(u t²)],         ∇U(ω) = σ^{−s−2} E_t[t^{s+2} q_1(u t²)] ω,
// and for the log kernel U(r²) = E_t[U_1(u t²)] + E log t − log σ, E log t = −(γ + log 2)/2.
// The average over t is the trapezoidal rule in y = log t (the integrand is analytic in a strip
// and decays double-exponentially as t → ∞, like t^{s+1} as t → 0, where its lattice tail is
// summed as a geometric series). It exists for −1 < s < d: the Cauchy law has no mean, so the
// energy distance (s = −1) is infinite.
#include <memory>

#include "frequencies/radial_convolution.hpp"
#include "physics/riesz_kernel.hpp"

namespace cpm {

class RieszPotentialOfCauchy final : public RadialConvolution {
 public:
  // `kernel`: the power kind with −1 < s < d, s ≠ 0, or log; σ > 0. `standard` is U_1, the same
  // kernel's potential against N(0, I_d) (a table of it for speed); null: the closed forms.
  // Throws std::invalid_argument for any other kernel.
  RieszPotentialOfCauchy(const InteractionKernel& kernel, int dim, double sigma,
                         std::shared_ptr<const RadialConvolution> standard = nullptr);

  double value_r2(double r2) const override;
  double gradient_factor(double r2) const override;
  int dim() const override { return d_; }
  double sigma() const override { return sigma_; }

 private:
  // E_t[t^power F(u t²)], F = U_1 (value) or q_1 (gradient factor).
  double mixture(double u, double power, bool gradient) const;

  bool log_ = false;
  double s_ = 0.0;
  int d_;
  double sigma_;
  std::shared_ptr<const RadialConvolution> standard_;
};

}  // namespace cpm
