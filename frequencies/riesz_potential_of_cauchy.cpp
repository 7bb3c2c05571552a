#include "frequencies/riesz_potential_of_cauchy.hpp"

#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <stdexcept>
#include <string>

#include "frequencies/riesz_potential_of_gaussian.hpp"

namespace cpm {

namespace {

// The lattice of y = log t: spacing 1/8 (the trapezoidal rule's error ~ exp(−π²/(2h)) ~ 1e-17 for
// a strip of half-width π/4), from t = 10 (weight e^{−50}) down to where u t² < e^{−28}, below
// which the integrand is c t^{power + 1} to 1e-12.
constexpr double kSpacing = 0.125;
constexpr double kTopY = 2.302585092994046;  // log 10
constexpr double kTailDepth = 14.0;

}  // namespace

RieszPotentialOfCauchy::RieszPotentialOfCauchy(const InteractionKernel& kernel, int dim,
                                               double sigma,
                                               std::shared_ptr<const RadialConvolution> standard)
    : d_(dim), sigma_(sigma), standard_(std::move(standard)) {
  using K = InteractionKernel::Kind;
  if (dim < 1) throw std::invalid_argument("W * p needs d >= 1");
  if (!(sigma > 0.0)) throw std::invalid_argument("W * p needs sigma > 0");
  if (kernel.kind == K::log) {
    log_ = true;
  } else if (kernel.kind == K::power || kernel.kind == K::linear) {
    s_ = kernel.kind == K::linear ? -1.0 : kernel.s;
    if (!(s_ > -1.0 && s_ < dim && s_ != 0.0))
      throw std::invalid_argument(
          "W * p for the Cauchy law of the laplace kernel needs -1 < s < d, s != 0 (s = " +
          std::to_string(s_) + ", d = " + std::to_string(dim) + "; the law has no mean)");
  } else {
    throw std::invalid_argument("W * p is defined for the riesz and log kernels, not " +
                                kernel.describe());
  }
  if (!standard_) standard_ = std::make_shared<const RieszPotentialOfGaussian>(kernel, dim, 1.0);
  if (standard_->dim() != dim || standard_->sigma() != 1.0)
    throw std::invalid_argument("W * p for the Cauchy law needs U_1 of the same d and sigma = 1");
}

double RieszPotentialOfCauchy::mixture(double u, double power, bool gradient) const {
  // E_t h(t) = √(2/π) ∫ h(e^y) e^y e^{−e^{2y}/2} dy over the real line.
  const double bottom = std::min(-0.5 * std::log(u), 0.0) - kTailDepth;
  double sum = 0.0, last = 0.0, y = kTopY;
  for (; y >= bottom; y -= kSpacing) {
    const double t = std::exp(y), v = u * t * t;
    const double f = gradient ? standard_->gradient_factor(v) : standard_->value_r2(v);
    last = f * std::exp((power + 1.0) * y - 0.5 * t * t);
    sum += last;
  }
  // The lattice below: last · Σ_{j≥1} ρ^j, ρ = e^{−(power + 1) h}.
  const double rho = std::exp(-(power + 1.0) * kSpacing);
  sum += last * rho / (1.0 - rho);
  return boost::math::constants::root_two_div_pi<double>() * kSpacing * sum;
}

double RieszPotentialOfCauchy::value_r2(double r2) const {
  const double u = r2 / (sigma_ * sigma_);
  if (log_) {
    const double mean_log_t =
        -0.5 * (boost::math::constants::euler<double>() + boost::math::constants::ln_two<double>());
    return mixture(u, 0.0, false) + mean_log_t - std::log(sigma_);
  }
  return std::pow(sigma_, -s_) * mixture(u, s_, false);
}

double RieszPotentialOfCauchy::gradient_factor(double r2) const {
  const double u = r2 / (sigma_ * sigma_);
  return std::pow(sigma_, -s_ - 2.0) * mixture(u, s_ + 2.0, true);
}

}  // namespace cpm
