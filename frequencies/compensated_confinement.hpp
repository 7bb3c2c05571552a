#pragma once
// The compensated confinement of repulsive features (docs/features.md §1):
//     V(ω) = β⁻¹ (−log p(ω)) − λ (W ∗ p)(ω),
// so that the mean-field stationarity condition V + λ W ∗ μ + β⁻¹ log μ = const holds at μ = p
// for every λ ≥ 0 and β ∈ (0, ∞]: the repulsion λ W no longer biases the law of the particles.
// p is the spectral law of the kernel (frequencies/spectral_law.hpp); W ∗ p comes in closed form,
// by quadrature or from a table. At β = ∞ the energy E_N of the particles is half the squared
// maximum mean discrepancy of μ_N to p for the kernel W, up to a constant (the self interaction of
// each particle left out).
#include <limits>
#include <memory>
#include <string>

#include "frequencies/radial_convolution.hpp"
#include "frequencies/spectral_law.hpp"
#include "physics/external_potential.hpp"

namespace cpm {

class CompensatedConfinement final : public ExternalPotential {
 public:
  // `convolution` is W ∗ p for p = `law` of its σ and d; β = ∞ (the default) leaves the entropic
  // anchor out.
  CompensatedConfinement(std::shared_ptr<const RadialConvolution> convolution, double lambda,
                         double beta = std::numeric_limits<double>::infinity(),
                         SpectralLaw law = SpectralLaw::gaussian);
  void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

 private:
  std::shared_ptr<const RadialConvolution> convolution_;
  double lambda_, beta_;
  SpectralLaw law_;
};

}  // namespace cpm
