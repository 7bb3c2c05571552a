#include "frequencies/riesz_potential_of_gaussian.hpp"

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/expint.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/hypergeometric_1F1.hpp>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cpm {

namespace {

// Where the asymptotic series take over from Boost's ₁F₁ (b = d/2 or d/2 + 1): their terms fall
// below 1e-17 there before they could grow, and the exponentially small part e^{−z} is negligible.
double asymptotic_from(double b) {
  return std::max(1000.0, 8.0 * b * b);
}

// The asymptotic series of ₁F₁(a; b; −z) for b − a > 0 (DLMF 13.7.2 after Kummer's
// transformation): Γ(b)/Γ(b − a) z^{−a} Σ_k (a)_k (a − b + 1)_k/(k! z^k).
double hypergeometric_1f1_large(double a, double b, double z) {
  double term = 1.0, sum = 1.0;
  for (int k = 0; k < 64 && std::abs(term) > 1e-17 * std::abs(sum); ++k) {
    term *= (a + k) * (a - b + 1.0 + k) / ((k + 1.0) * z);
    sum += term;
  }
  return boost::math::tgamma_ratio(b, b - a) * std::pow(z, -a) * sum;
}

// ₁F₁(a; b; −z), z ≥ 0.
double hypergeometric_1f1(double a, double b, double z) {
  return z < asymptotic_from(b) ? boost::math::hypergeometric_1F1(a, b, -z)
                                : hypergeometric_1f1_large(a, b, z);
}

// U + ½ log r² of the log kernel for large z: ½ Σ_{k≥1} (2 − b)_k/(k z^k), b = d/2 + 1, the
// integral from z to ∞ of the asymptotic series of (1/d) ₁F₁(1; b; −u) − 1/(2u).
double log_kernel_remainder(double b, double z) {
  double pochhammer = 1.0, sum = 0.0;
  for (int k = 1; k <= 64; ++k) {
    pochhammer *= (2.0 - b + k - 1.0) / z;
    const double term = pochhammer / k;
    sum += term;
    if (std::abs(term) <= 1e-17 * (std::abs(sum) + 1.0)) break;
  }
  return 0.5 * sum;
}

}  // namespace

RieszPotentialOfGaussian::RieszPotentialOfGaussian(const InteractionKernel& kernel, int dim,
                                                   double sigma)
    : d_(dim), sigma_(sigma) {
  using K = InteractionKernel::Kind;
  if (dim < 1) throw std::invalid_argument("W * p needs d >= 1");
  if (!(sigma > 0.0)) throw std::invalid_argument("W * p needs sigma > 0");
  if (kernel.kind == K::log) {
    log_ = true;
    prefactor_ = -0.5 * (std::log(2.0 * sigma * sigma) + boost::math::digamma(0.5 * dim));
    return;
  }
  if (kernel.kind == K::linear)
    s_ = -1.0;
  else if (kernel.kind == K::power)
    s_ = kernel.s;
  else
    throw std::invalid_argument("W * p is defined for the riesz, log and linear kernels, not " +
                                kernel.describe());
  if (!(s_ > -2.0 && s_ < dim && s_ != 0.0))
    throw std::invalid_argument("W * p needs -2 < s < d, s != 0 (s = " + std::to_string(s_) +
                                ", d = " + std::to_string(dim) + ")");
  prefactor_ = (s_ > 0.0 ? 1.0 : -1.0) * std::pow(sigma, -s_) * std::pow(2.0, -0.5 * s_) *
               boost::math::tgamma_ratio(0.5 * (dim - s_), 0.5 * dim);
}

double RieszPotentialOfGaussian::value_r2(double r2) const {
  const double z = r2 / (2.0 * sigma_ * sigma_);
  if (!log_) return prefactor_ * hypergeometric_1f1(0.5 * s_, 0.5 * d_, z);
  if (z == 0.0) return prefactor_;
  if (d_ == 2) return -0.5 * (std::log(r2) + boost::math::expint(1, z));
  const double b = 0.5 * d_ + 1.0;
  if (z >= asymptotic_from(b)) return -0.5 * std::log(r2) + log_kernel_remainder(b, z);
  const double integral = boost::math::quadrature::gauss_kronrod<double, 31>::integrate(
      [b](double u) { return hypergeometric_1f1(1.0, b, u); }, 0.0, z, 10, 1e-13);
  return prefactor_ - integral / d_;
}

double RieszPotentialOfGaussian::gradient_factor(double r2) const {
  const double z = r2 / (2.0 * sigma_ * sigma_);
  const double over_sigma2 = 1.0 / (sigma_ * sigma_);
  if (log_) return -over_sigma2 / d_ * hypergeometric_1f1(1.0, 0.5 * d_ + 1.0, z);
  return -(s_ / d_) * prefactor_ * over_sigma2 *
         hypergeometric_1f1(0.5 * s_ + 1.0, 0.5 * d_ + 1.0, z);
}

double RieszPotentialOfGaussian::self_energy() const {
  const InteractionKernel kernel = log_ ? InteractionKernel::log() : InteractionKernel::power(s_);
  return RieszPotentialOfGaussian(kernel, d_, std::sqrt(2.0) * sigma_).value_r2(0.0);
}

}  // namespace cpm
