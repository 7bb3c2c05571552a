#pragma once
// The spectral laws p of the shift-invariant kernels the features approximate (docs/features.md):
//   gaussian  k(Δ) = exp(−σ²|Δ|²/2), p = N(0, σ² I_d), −log p = |ω|²/(2σ²);
//   laplace   k(Δ) = exp(−σ|Δ|), p the multivariate Cauchy law of scale σ,
//             −log p = ((d + 1)/2) log(1 + |ω|²/σ²)
// (−log p up to its normalising constant).
#include <optional>
#include <string>

namespace cpm {

enum class SpectralLaw { gaussian, laplace };

std::string spectral_law_name(SpectralLaw law);
// The law of a configuration name ("gaussian", "laplace"); empty for an unknown name.
std::optional<SpectralLaw> spectral_law_from_name(const std::string& name);
// The kernel k(Δ) = E cos(ωᵀΔ) at |Δ|² = r2: exp(−σ² r2/2) or exp(−σ √r2).
double spectral_kernel(SpectralLaw law, double sigma, double r2);

// −log p(ω) at |ω|² = r2, up to a constant, and the factor a with ∇(−log p)(ω) = a ω.
double negative_log_density(SpectralLaw law, int dim, double sigma, double r2);
double negative_log_density_factor(SpectralLaw law, int dim, double sigma, double r2);

}  // namespace cpm
