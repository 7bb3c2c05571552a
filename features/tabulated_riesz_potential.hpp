#pragma once
// U = W ∗ p and its gradient factor (features/riesz_potential_of_gaussian.hpp) tabulated once on
// a uniform grid in u = |ω|²/σ² and interpolated by four-point Lagrange cubics: the Langevin
// dynamics of the compensated gas evaluates them N times per step, and ₁F₁ (a quadrature of it
// for the log kernel in d ≠ 2) costs ~10 pair interactions. Beyond the grid (|ω| > 16σ) the closed
// forms are evaluated. Interpolation error ≲ 1e-9 relative (tests/features).
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "features/riesz_potential_of_gaussian.hpp"

namespace cpm {

class TabulatedRieszPotential {
 public:
  explicit TabulatedRieszPotential(RieszPotentialOfGaussian potential);

  double value_r2(double r2) const {
    return interpolate(values_, r2, &RieszPotentialOfGaussian::value_r2);
  }
  double gradient_factor(double r2) const {
    return interpolate(factors_, r2, &RieszPotentialOfGaussian::gradient_factor);
  }
  const RieszPotentialOfGaussian& exact() const { return potential_; }

 private:
  double interpolate(const std::vector<double>& table, double r2,
                     double (RieszPotentialOfGaussian::*exact)(double) const) const;

  RieszPotentialOfGaussian potential_;
  double spacing_;  // in u = r²/σ²
  std::vector<double> values_, factors_;
};

// One table per (kernel, d, σ) for the whole process, built on first use (thread-safe).
std::shared_ptr<const TabulatedRieszPotential> shared_riesz_table(const InteractionKernel& kernel,
                                                                  int dim, double sigma);

}  // namespace cpm
