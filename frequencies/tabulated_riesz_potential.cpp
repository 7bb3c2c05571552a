#include "frequencies/tabulated_riesz_potential.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "frequencies/riesz_potential_of_cauchy.hpp"
#include "frequencies/riesz_potential_of_gaussian.hpp"

namespace cpm {

namespace {
const double kLastX = std::log1p(1e16);  // the grid covers |ω| ≤ 1e8 σ
constexpr int kIntervals = 1 << 14;
}  // namespace

TabulatedRieszPotential::TabulatedRieszPotential(std::shared_ptr<const RadialConvolution> exact)
    : exact_(std::move(exact)),
      inverse_sigma2_(1.0 / (exact_->sigma() * exact_->sigma())),
      spacing_(kLastX / kIntervals) {
  const double sigma2 = exact_->sigma() * exact_->sigma();
  values_.resize(kIntervals + 1);
  factors_.resize(kIntervals + 1);
#pragma omp parallel for schedule(dynamic, 64)
  for (int i = 0; i <= kIntervals; ++i) {
    const double r2 = std::expm1(i * spacing_) * sigma2;
    values_[i] = exact_->value_r2(r2);
    factors_[i] = exact_->gradient_factor(r2);
  }
}

double TabulatedRieszPotential::interpolate(const std::vector<double>& table, double r2,
                                            double (RadialConvolution::*exact)(double)
                                                const) const {
  const double x = std::log1p(r2 * inverse_sigma2_) / spacing_;
  if (!(x < kIntervals)) return ((*exact_).*exact)(r2);
  // The Lagrange cubic through nodes j .. j + 3, centred on the interval of x where it can be.
  const int j = std::clamp(static_cast<int>(x) - 1, 0, kIntervals - 3);
  const double t = x - j - 1.0;  // the nodes sit at t = −1, 0, 1, 2
  const double* f = table.data() + j;
  const double a = -t * (t - 1.0) * (t - 2.0) / 6.0, b = (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0;
  const double c = -(t + 1.0) * t * (t - 2.0) / 2.0, d = (t + 1.0) * t * (t - 1.0) / 6.0;
  return a * f[0] + b * f[1] + c * f[2] + d * f[3];
}

std::shared_ptr<const TabulatedRieszPotential> shared_riesz_table(const InteractionKernel& kernel,
                                                                  int dim, double sigma,
                                                                  SpectralLaw law) {
  // The Cauchy law's table integrates the Gaussian table of σ = 1 (built first, outside the lock).
  std::shared_ptr<const RadialConvolution> standard;
  if (law == SpectralLaw::laplace) standard = shared_riesz_table(kernel, dim, 1.0);
  static std::mutex mutex;
  static std::map<std::tuple<SpectralLaw, std::string, int, double>,
                  std::shared_ptr<const TabulatedRieszPotential>>
      tables;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& table = tables[{law, kernel.describe(), dim, sigma}];
  if (!table) {
    std::shared_ptr<const RadialConvolution> exact;
    if (law == SpectralLaw::laplace)
      exact = std::make_shared<const RieszPotentialOfCauchy>(kernel, dim, sigma, standard);
    else
      exact = std::make_shared<const RieszPotentialOfGaussian>(kernel, dim, sigma);
    table = std::make_shared<const TabulatedRieszPotential>(std::move(exact));
  }
  return table;
}

}  // namespace cpm
