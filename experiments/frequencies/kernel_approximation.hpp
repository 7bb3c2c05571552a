#pragma once
// How well N frequencies ω_1..ω_N reproduce a kernel k(x, y) = E cos(ωᵀ(x − y)) — the Gaussian
// exp(−σ²|x − y|²/2) or the Laplace exp(−σ|x − y|) (frequencies/feature_generator.hpp) — on a point
// set (docs/features.md §4). The random-feature kernel is the cos/sin pair average
//     k_N(x, y) = (1/N) Σ_k cos(ω_kᵀ(x − y)),
// unbiased when each ω_k has the kernel's spectral law p, and the errors are those of the Gram
// matrix K_N − K: relative Frobenius and spectral norms and the largest entry.
#include <Eigen/Dense>

#include "frequencies/feature_generator.hpp"

namespace cpm {

struct KernelApproximationErrors {
  double frobenius = 0.0;  // ‖K_N − K‖_F / ‖K‖_F
  double max_entry = 0.0;  // max |K_N − K|
  double spectral = 0.0;   // ‖K_N − K‖₂ / ‖K‖₂
};

// x: (n, d) points; omega: (N, d) frequencies.
KernelApproximationErrors kernel_errors(const Eigen::MatrixXd& x, const Eigen::MatrixXd& omega,
                                        double sigma, SpectralLaw law = SpectralLaw::gaussian);

// The energy distance of the empirical measure of the rows of omega to N(0, σ² I), the MMD for
// the kernel −|z|: (2 E|ω − Z| − E|ω − ω'| − E|Z − Z'|)^{1/2} with ω, ω' ~ μ_N, Z, Z' ~ p, the
// terms with p in closed form (frequencies/riesz_potential_of_gaussian.hpp).
double energy_distance_to_gaussian(const Eigen::MatrixXd& omega, double sigma);

}  // namespace cpm
