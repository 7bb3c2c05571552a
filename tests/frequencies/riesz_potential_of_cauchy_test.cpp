#include "frequencies/riesz_potential_of_cauchy.hpp"

#include <gtest/gtest.h>

#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <memory>

#include "frequencies/tabulated_riesz_potential.hpp"

namespace cpm {
namespace {

using boost::math::constants::pi;

// W(t) for t > 0.
double kernel_at(const InteractionKernel& k, double t) {
  if (k.kind == InteractionKernel::Kind::log) return -std::log(t);
  return k.s > 0.0 ? std::pow(t, -k.s) : -std::pow(t, -k.s);
}

// In 1D the Cauchy law of scale σ has the density σ/(π(σ² + y²)): U(x) = ∫ W(x − y) p(y) dy
// directly, by tanh–sinh over the distance t = |x − y| on the two half-lines out of the
// singularity at y = x, the left one split where it crosses the density's peak (t = x).
double direct_potential_1d(const InteractionKernel& k, double sigma, double x) {
  boost::math::quadrature::tanh_sinh<double> ts;
  auto density = [&](double y) { return sigma / (pi<double>() * (sigma * sigma + y * y)); };
  auto right = [&](double t) { return kernel_at(k, t) * density(x + t); };
  auto left = [&](double t) { return kernel_at(k, t) * density(x - t); };
  const double inf = std::numeric_limits<double>::infinity();
  double u = ts.integrate(right, 0.0, inf) + ts.integrate(left, 2.0 * x, inf);
  if (x > 0.0) u += ts.integrate(left, 0.0, x) + ts.integrate(left, x, 2.0 * x);
  return u;
}

// Through the Gaussian table of σ = 1, as the gas builds it.
TEST(RieszPotentialOfCauchy, EqualsTheDirectConvolutionIn1d) {
  const double sigma = 0.8;
  for (const InteractionKernel& k : {InteractionKernel::power(0.5), InteractionKernel::power(-0.5),
                                     InteractionKernel::log(), InteractionKernel::power(-0.9)}) {
    const RieszPotentialOfCauchy u(k, 1, sigma, shared_riesz_table(k, 1, 1.0));
    for (double x : {0.0, 0.3, 1.7, 25.0, 3e3}) {
      const double direct = direct_potential_1d(k, sigma, x);
      EXPECT_NEAR(u.value_r2(x * x), direct, 1e-9 * (1.0 + std::abs(direct)))
          << k.describe() << " x=" << x;
    }
  }
}

// Newton's theorem for the radial Cauchy law in 3D, whose radius has the density
// (4/(πσ)) ρ̂²/(1 + ρ̂²)², ρ̂ = ρ/σ: U(r) = P(R < r)/r + E[1/R; R > r] = (2/π) atan(r/σ)/r.
TEST(RieszPotentialOfCauchy, CoulombIn3dIsNewtonsArctangentOverR) {
  const double sigma = 1.3;
  const RieszPotentialOfCauchy u(InteractionKernel::power(1.0), 3, sigma);
  EXPECT_NEAR(u.value_r2(0.0), 2.0 / (pi<double>() * sigma), 1e-12);
  for (double r : {0.01, 0.5, 2.0, 40.0, 1e4, 1e9}) {
    const double exact = 2.0 / pi<double>() * std::atan(r / sigma) / r;
    EXPECT_NEAR(u.value_r2(r * r), exact, 1e-11 * exact) << r;
    // q = U'(r)/r.
    const double slope =
        2.0 / pi<double>() *
        (1.0 / (sigma * (1.0 + r * r / (sigma * sigma))) - std::atan(r / sigma) / r) / r;
    EXPECT_NEAR(u.gradient_factor(r * r), slope / r, 1e-10 * std::abs(slope / r)) << r;
  }
}

// Over the closed forms (the log kernel in d = 2 only, where its U has one: elsewhere each value
// is a Gauss–Kronrod integral, 300 of them per point).
TEST(RieszPotentialOfCauchy, GradientIsTheDerivativeOfTheValue) {
  for (int d : {1, 2, 3, 8})
    for (const InteractionKernel& k :
         {InteractionKernel::power(-0.6), InteractionKernel::power(0.7), InteractionKernel::log(),
          InteractionKernel::power(d - 0.5)}) {
      if (k.kind == InteractionKernel::Kind::log && d != 2) continue;
      const RieszPotentialOfCauchy u(k, d, 0.9);
      for (double r : {0.2, 1.0, 7.0, 300.0, 1e5}) {
        const double h = 1e-5 * r;
        const double fd =
            (u.value_r2((r + h) * (r + h)) - u.value_r2((r - h) * (r - h))) / (2.0 * h);
        EXPECT_NEAR(u.gradient_factor(r * r) * r, fd, 1e-6 * std::abs(fd) + 1e-14)
            << k.describe() << " d=" << d << " r=" << r;
      }
    }
}

// The mixture over the Gaussian table (how the gas builds it) agrees with the one over the closed
// forms, and the Cauchy law's own table with both, from 0 to far past the grid (|ω| = 1e8 σ).
TEST(RieszPotentialOfCauchy, TablesAgreeWithTheClosedFormsOverTheHeavyTail) {
  for (const auto& [k, d] :
       {std::pair{InteractionKernel::power(0.5), 2}, std::pair{InteractionKernel::log(), 2},
        std::pair{InteractionKernel::power(1.0), 3}}) {
    const double sigma = 0.7;
    const RieszPotentialOfCauchy exact(k, d, sigma);
    const auto table = shared_riesz_table(k, d, sigma, SpectralLaw::laplace);
    const double value_scale = std::abs(exact.value_r2(0.0)) + 1.0;
    const double factor_scale = std::abs(exact.gradient_factor(0.0));
    for (int i = 0; i <= 400; ++i) {
      const double r = sigma * std::pow(10.0, -3.0 + 12.0 * (i + 0.37) / 400.0);
      EXPECT_NEAR(table->value_r2(r * r), exact.value_r2(r * r),
                  1e-9 * value_scale + 1e-9 * std::abs(exact.value_r2(r * r)))
          << k.describe() << " r=" << r;
      EXPECT_NEAR(table->gradient_factor(r * r), exact.gradient_factor(r * r), 1e-9 * factor_scale)
          << k.describe() << " r=" << r;
    }
  }
}

TEST(RieszPotentialOfCauchy, RejectsKernelsTheLawCannotCarry) {
  // The energy distance: the Cauchy law has no mean.
  EXPECT_THROW(RieszPotentialOfCauchy(InteractionKernel::linear(), 2, 1.0), std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfCauchy(InteractionKernel::power(-1.5), 2, 1.0),
               std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfCauchy(InteractionKernel::power(2.0), 2, 1.0),
               std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfCauchy(InteractionKernel::power(0.5), 2, 0.0),
               std::invalid_argument);
  EXPECT_THROW(RieszPotentialOfCauchy(InteractionKernel::quadratic(1.0), 2, 1.0),
               std::invalid_argument);
}

}  // namespace
}  // namespace cpm
