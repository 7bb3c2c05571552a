#include "frequencies/riesz_potential_of_gaussian.hpp"

#include <gtest/gtest.h>

#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <string>

namespace cpm {
namespace {

using boost::math::constants::pi;

// E W(x − Z) for Z ~ N(0, σ² I_d), |x| = r, by tanh–sinh quadrature, which handles the integrable
// singularities at the ends of its intervals: in d = 1 over the distance t = |x − Z|; in d ≥ 2
// over ρ = |Z| (split at ρ = r) of the average of W over the sphere |Z| = ρ, written over
// t = |x − Z| (t² = r² + ρ² − 2rρ cos θ):
//     ∫_0^π W sin^{d−2}θ dθ = ∫_{|r−ρ|}^{r+ρ} W(t) (t/(rρ)) sin^{d−3}θ dt,
//     sin θ = √((t² − (r − ρ)²)((r + ρ)² − t²)) / (2rρ).
double quadrature_potential(const InteractionKernel& kernel, int d, double sigma, double r) {
  // t^p W(t), written through t as one power (t² underflows, and t^{−s} overflows, where
  // tanh–sinh samples near 0).
  auto w_times = [&](double t, double p) {
    if (kernel.kind == InteractionKernel::Kind::log) return -std::pow(t, p) * std::log(t);
    const double s = kernel.kind == InteractionKernel::Kind::linear ? -1.0 : kernel.s;
    return s > 0.0 ? std::pow(t, p - s) : -std::pow(t, p - s);
  };
  auto w = [&](double t) { return w_times(t, 0.0); };
  boost::math::quadrature::tanh_sinh<double> ts;
  auto gauss = [&](double y) { return std::exp(-0.5 * y * y / (sigma * sigma)); };
  if (d == 1) {
    auto f = [&](double t) { return w(t) * (gauss(r - t) + gauss(r + t)); };
    return ts.integrate(f, 0.0, 30.0 * sigma + r) / (sigma * std::sqrt(2.0 * pi<double>()));
  }
  const double sphere = std::sqrt(pi<double>()) * boost::math::tgamma_ratio(0.5 * (d - 1), 0.5 * d);
  auto average = [&](double rho) {
    if (rho < 1e-9 * r) return w(r);  // a sphere too small to see W vary
    const double a = std::abs(r - rho), b = r + rho;
    // tc: the signed distance to the nearer end, exact where t − a or b − t would cancel.
    auto f = [&](double t, double tc) {
      const bool near_a = t < 0.5 * (a + b);
      const double from_a = near_a ? -tc : t - a, to_b = near_a ? b - t : tc;
      const double sine = std::sqrt(from_a * (t + a) * to_b * (b + t)) / (2.0 * r * rho);
      return w(t) * t / (r * rho) * std::pow(sine, d - 3);
    };
    return ts.integrate(f, a, b) / sphere;
  };
  const double norm = std::pow(2.0, 0.5 * d - 1.0) * std::tgamma(0.5 * d) * std::pow(sigma, d);
  auto radial = [&](double rho) {
    return (r == 0.0 ? w_times(rho, d - 1) : std::pow(rho, d - 1) * average(rho)) * gauss(rho) /
           norm;
  };
  const double far = 12.0 * sigma + r;
  return (r > 0.0 ? ts.integrate(radial, 0.0, r) : 0.0) + ts.integrate(radial, r, far);
}

TEST(RieszPotentialOfGaussian, CoulombIn3dIsNewtonsErfOverR) {
  const double sigma = 1.7;
  const RieszPotentialOfGaussian u(InteractionKernel::power(1.0), 3, sigma);
  for (double r : {0.05, 0.3, 1.0, 2.5, 6.0, 15.0})
    EXPECT_NEAR(u.value_r2(r * r), std::erf(r / (sigma * std::sqrt(2.0))) / r, 1e-13) << r;
  EXPECT_NEAR(u.value_r2(0.0), std::sqrt(2.0 / pi<double>()) / sigma, 1e-14);
}

TEST(RieszPotentialOfGaussian, LogIn2dIsMinusHalfLogR2PlusE1) {
  // Exponential integral E1 by quadrature: ∫_1^∞ e^{−z t}/t dt.
  auto e1 = [](double z) {
    return boost::math::quadrature::tanh_sinh<double>().integrate(
        [z](double t) { return std::exp(-z * t) / t; }, 1.0,
        std::numeric_limits<double>::infinity());
  };
  const double sigma = 0.8;
  const RieszPotentialOfGaussian u(InteractionKernel::log(), 2, sigma);
  for (double r : {0.1, 0.7, 2.0, 5.0}) {
    const double z = r * r / (2.0 * sigma * sigma);
    EXPECT_NEAR(u.value_r2(r * r), -0.5 * (std::log(r * r) + e1(z)), 1e-12) << r;
  }
}

TEST(RieszPotentialOfGaussian, EqualsQuadratureOfTheConvolution) {
  struct Case {
    InteractionKernel kernel;
    int d;
  };
  const Case cases[] = {{InteractionKernel::linear(), 1},   {InteractionKernel::power(-1.5), 1},
                        {InteractionKernel::power(0.5), 1}, {InteractionKernel::log(), 1},
                        {InteractionKernel::log(), 2},      {InteractionKernel::power(-1.0), 2},
                        {InteractionKernel::power(1.2), 2}, {InteractionKernel::power(-0.5), 4},
                        {InteractionKernel::power(2.0), 4}, {InteractionKernel::log(), 4},
                        {InteractionKernel::power(-1.0), 5}};
  const double sigma = 1.3;
  for (const Case& c : cases) {
    const RieszPotentialOfGaussian u(c.kernel, c.d, sigma);
    for (double r : {0.0, 0.4, 1.1, 3.0}) {
      const double expected = quadrature_potential(c.kernel, c.d, sigma, r);
      EXPECT_NEAR(u.value_r2(r * r), expected, 1e-8 * (1.0 + std::abs(expected)))
          << c.kernel.describe() << " d=" << c.d << " r=" << r;
    }
  }
}

TEST(RieszPotentialOfGaussian, GradientIsTheDerivativeOfTheValue) {
  const InteractionKernel kernels[] = {InteractionKernel::linear(), InteractionKernel::power(-1.3),
                                       InteractionKernel::power(0.6), InteractionKernel::power(1.0),
                                       InteractionKernel::log()};
  for (int d : {1, 2, 3, 8, 16})
    for (const InteractionKernel& k : kernels) {
      if (k.kind == InteractionKernel::Kind::power && k.s >= d) continue;
      const RieszPotentialOfGaussian u(k, d, 0.9);
      for (double r : {0.2, 1.0, 2.7, 7.0}) {
        // dU/dr = q r, by a central difference in r.
        const double h = 1e-5 * r;
        const double fd =
            (u.value_r2((r + h) * (r + h)) - u.value_r2((r - h) * (r - h))) / (2.0 * h);
        EXPECT_NEAR(u.gradient_factor(r * r) * r, fd, 1e-7 * (1.0 + std::abs(fd)))
            << k.describe() << " d=" << d << " r=" << r;
      }
    }
}

// Far out (z = r²/(2σ²) ≥ 1000) the asymptotic series take over from Boost's ₁F₁: the two agree
// across the switch, the gradient stays the derivative of the value, and Newton's theorem in 3D
// (U = erf(r/(σ√2))/r = 1/r there) holds to the last digits at |ω| = 1e6 σ, where Boost's ₁F₁
// was off by 1e-6.
TEST(RieszPotentialOfGaussian, AsymptoticSeriesContinueTheClosedFormsFarOut) {
  const std::pair<InteractionKernel, int> cases[] = {
      {InteractionKernel::power(0.5), 3}, {InteractionKernel::power(-0.7), 2},
      {InteractionKernel::log(), 3},      {InteractionKernel::log(), 16},
      {InteractionKernel::power(6.0), 8}, {InteractionKernel::linear(), 16}};
  const double sigma = 0.6, switch_r = sigma * std::sqrt(2000.0);
  for (const auto& [k, d] : cases) {
    const RieszPotentialOfGaussian u(k, d, sigma);
    const double below = switch_r * (1.0 - 1e-14), above = switch_r * (1.0 + 1e-14);
    const double value = u.value_r2(below * below), factor = u.gradient_factor(below * below);
    EXPECT_NEAR(u.value_r2(above * above), value, 1e-11 * std::abs(value)) << k.describe();
    EXPECT_NEAR(u.gradient_factor(above * above), factor, 1e-11 * std::abs(factor)) << k.describe();
    for (double r : {40.0, 1e3, 1e6}) {
      const double h = 1e-5 * r;
      const double fd = (u.value_r2((r + h) * (r + h)) - u.value_r2((r - h) * (r - h))) / (2 * h);
      EXPECT_NEAR(u.gradient_factor(r * r) * r, fd, 1e-6 * std::abs(fd))
          << k.describe() << " d=" << d << " r=" << r;
    }
  }
  const RieszPotentialOfGaussian newton(InteractionKernel::power(1.0), 3, sigma);
  for (double r : {1e3, 1e6}) {
    EXPECT_NEAR(newton.value_r2(r * r) * r, 1.0, 1e-14) << r;
    EXPECT_NEAR(-newton.gradient_factor(r * r) * r * r * r, 1.0, 1e-14) << r;  // ∇(1/r) = −ω/r³
  }
}

TEST(RieszPotentialOfGaussian, SelfEnergyOfTheEnergyDistanceIsMinusTheMeanDistance) {
  // E|Z − Z'| = 2σ Γ((d + 1)/2) / Γ(d/2) for Z, Z' ~ N(0, σ² I_d) independent.
  for (int d : {1, 2, 5, 16}) {
    const double sigma = 0.7;
    const RieszPotentialOfGaussian u(InteractionKernel::linear(), d, sigma);
    EXPECT_NEAR(u.self_energy(), -2.0 * sigma * boost::math::tgamma_ratio(0.5 * (d + 1), 0.5 * d),
                1e-13)
        << d;
  }
}

TEST(RieszPotentialOfGaussian, RejectsKernelsWithoutAClosedForm) {
  EXPECT_THROW(RieszPotentialOfGaussian(InteractionKernel::quadratic(1.0), 2, 1.0),
               std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfGaussian(InteractionKernel::power(2.0), 2, 1.0),
               std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfGaussian(InteractionKernel::power(1.0), 3, 0.0),
               std::invalid_argument);
}

}  // namespace
}  // namespace cpm
