#include "features/tabulated_riesz_potential.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace cpm {

namespace {
constexpr double kLastU = 256.0;  // the grid covers |ω| ≤ 16σ
constexpr int kIntervals = 1 << 14;
}  // namespace

TabulatedRieszPotential::TabulatedRieszPotential(RieszPotentialOfGaussian potential)
    : potential_(std::move(potential)), spacing_(kLastU / kIntervals) {
  const double sigma2 = potential_.sigma() * potential_.sigma();
  values_.resize(kIntervals + 1);
  factors_.resize(kIntervals + 1);
#pragma omp parallel for schedule(static)
  for (int i = 0; i <= kIntervals; ++i) {
    values_[i] = potential_.value_r2(i * spacing_ * sigma2);
    factors_[i] = potential_.gradient_factor(i * spacing_ * sigma2);
  }
}

double TabulatedRieszPotential::interpolate(const std::vector<double>& table, double r2,
                                            double (RieszPotentialOfGaussian::*exact)(double)
                                                const) const {
  const double u = r2 / (potential_.sigma() * potential_.sigma()) / spacing_;
  if (!(u < kIntervals)) return (potential_.*exact)(r2);
  // The Lagrange cubic through nodes j .. j + 3, centred on the interval of u where it can be.
  const int j = std::clamp(static_cast<int>(u) - 1, 0, kIntervals - 3);
  const double t = u - j - 1.0;  // the nodes sit at t = −1, 0, 1, 2
  const double* f = table.data() + j;
  const double a = -t * (t - 1.0) * (t - 2.0) / 6.0, b = (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0;
  const double c = -(t + 1.0) * t * (t - 2.0) / 2.0, d = (t + 1.0) * t * (t - 1.0) / 6.0;
  return a * f[0] + b * f[1] + c * f[2] + d * f[3];
}

std::shared_ptr<const TabulatedRieszPotential> shared_riesz_table(const InteractionKernel& kernel,
                                                                  int dim, double sigma) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, double>,
                  std::shared_ptr<const TabulatedRieszPotential>>
      tables;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& table = tables[{kernel.describe(), dim, sigma}];
  if (!table)
    table = std::make_shared<const TabulatedRieszPotential>(
        RieszPotentialOfGaussian(kernel, dim, sigma));
  return table;
}

}  // namespace cpm
