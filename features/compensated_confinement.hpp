#pragma once
// The compensated confinement of repulsive features (docs/features.md §1):
//     V(ω) = β⁻¹ (−log p(ω)) − λ (W ∗ p)(ω),   p = N(0, σ² I),
// so that the mean-field stationarity condition V + λ W ∗ μ + β⁻¹ log μ = const holds at μ = p
// for every λ ≥ 0 and β ∈ (0, ∞]: the repulsion λ W no longer biases the law of the particles.
// −log p(ω) = |ω|²/(2σ²) up to a constant. At β = ∞ the energy E_N of the particles is half the
// squared maximum mean discrepancy of μ_N to p for the kernel W, up to a constant (the self
// interaction of each particle left out).
#include <limits>
#include <string>

#include <memory>

#include "features/riesz_potential_of_gaussian.hpp"
#include "features/tabulated_riesz_potential.hpp"
#include "physics/external_potential.hpp"

namespace cpm {

class CompensatedConfinement final : public ExternalPotential {
 public:
  // β = ∞ (the default) leaves the entropic anchor out.
  CompensatedConfinement(RieszPotentialOfGaussian potential, double lambda,
                         double beta = std::numeric_limits<double>::infinity());
  // W ∗ p interpolated from a table (the Langevin dynamics, where speed matters more than the
  // last digits).
  CompensatedConfinement(std::shared_ptr<const TabulatedRieszPotential> table, double lambda,
                         double beta);
  void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

 private:
  RieszPotentialOfGaussian potential_;
  std::shared_ptr<const TabulatedRieszPotential> table_;  // null: the closed forms
  double lambda_, beta_;
};

}  // namespace cpm
