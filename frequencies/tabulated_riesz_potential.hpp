#pragma once
// U = W ∗ p and its gradient factor (frequencies/radial_convolution.hpp) tabulated once on a
// uniform grid in x = log(1 + |ω|²/σ²) and interpolated by four-point Lagrange cubics: the Langevin
// dynamics of the compensated gas evaluates them N times per step, and the exact forms cost
// ~10 pair interactions (₁F₁) or ~200 (the Cauchy law's mixture). In x the heavy-tailed U of the
// Cauchy law is as smooth as the Gaussian's (U ~ e^{−s x/2} far out); the grid reaches
// |ω| = 1e8 σ, beyond which the exact forms are evaluated. Interpolation error ≲ 1e-9 relative
// (tests/features).
#include <memory>
#include <vector>

#include "frequencies/radial_convolution.hpp"
#include "frequencies/spectral_law.hpp"
#include "physics/riesz_kernel.hpp"

namespace cpm {

class TabulatedRieszPotential final : public RadialConvolution {
 public:
  explicit TabulatedRieszPotential(std::shared_ptr<const RadialConvolution> exact);

  double value_r2(double r2) const override {
    return interpolate(values_, r2, &RadialConvolution::value_r2);
  }
  double gradient_factor(double r2) const override {
    return interpolate(factors_, r2, &RadialConvolution::gradient_factor);
  }
  int dim() const override { return exact_->dim(); }
  double sigma() const override { return exact_->sigma(); }

 private:
  double interpolate(const std::vector<double>& table, double r2,
                     double (RadialConvolution::*exact)(double) const) const;

  std::shared_ptr<const RadialConvolution> exact_;
  double inverse_sigma2_;  // 1/σ²
  double spacing_;         // in x = log(1 + r²/σ²)
  std::vector<double> values_, factors_;
};

// One table per (law, kernel, d, σ) for the whole process, built on first use (thread-safe).
std::shared_ptr<const TabulatedRieszPotential> shared_riesz_table(
    const InteractionKernel& kernel, int dim, double sigma,
    SpectralLaw law = SpectralLaw::gaussian);

}  // namespace cpm
