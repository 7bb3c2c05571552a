#include "frequencies/spectral_law.hpp"

#include <cmath>

namespace cpm {

std::string spectral_law_name(SpectralLaw law) {
  return law == SpectralLaw::laplace ? "laplace" : "gaussian";
}

std::optional<SpectralLaw> spectral_law_from_name(const std::string& name) {
  if (name == "gaussian") return SpectralLaw::gaussian;
  if (name == "laplace") return SpectralLaw::laplace;
  return std::nullopt;
}

double spectral_kernel(SpectralLaw law, double sigma, double r2) {
  return law == SpectralLaw::laplace ? std::exp(-sigma * std::sqrt(r2))
                                     : std::exp(-0.5 * sigma * sigma * r2);
}

double negative_log_density(SpectralLaw law, int dim, double sigma, double r2) {
  const double u = r2 / (sigma * sigma);
  return law == SpectralLaw::laplace ? 0.5 * (dim + 1.0) * std::log1p(u) : 0.5 * u;
}

double negative_log_density_factor(SpectralLaw law, int dim, double sigma, double r2) {
  return law == SpectralLaw::laplace ? (dim + 1.0) / (sigma * sigma + r2) : 1.0 / (sigma * sigma);
}

}  // namespace cpm
