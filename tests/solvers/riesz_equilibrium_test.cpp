// docs/exact_solutions.md §1: at β = ∞ the Riesz gas in V = a|x|²/2 relaxes to
//   ρ(x) = c (R² − |x|²)_+^γ,  γ = (s − d + 2)/2  (the semicircle for the 1D log gas),
// whose radial law is |x|²/R² ~ Beta(d/2, γ + 1). Particles relaxed by the gradient flow from a
// Gaussian start must reproduce R and the radial law (Kolmogorov–Smirnov distance shrinking with
// N).
//
// R is read from the second moment, E|x|² = R² (d/2)/(d/2 + γ + 1). With the self term excluded,
// the N-particle equilibrium differs from the continuum one by the next-order (self-energy) term,
// relatively O(N^{s/d − 1}) for s > 0 and O(log N / N) for the log gas: each particle repels the
// others but not itself, so the cloud is slightly smaller. The test checks that the radii approach
// R at that rate (the observed exponent is printed) and that the Richardson extrapolation with the
// known exponent, R_∞ = (2^p R_{2N} − R_N)/(2^p − 1), lies within 2% of R.
//
// The same checks run on the equilibria found directly by the Newton and L-BFGS minimisers
// (solvers/energy_minimizer.hpp), which also reach the Coulomb case in d = 3 (s = 1: the
// uniform unit ball for a = 1, γ = 0), too slow to relax by the explicit flow at these N.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>

#include "core/initial_law.hpp"
#include "core/observables.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/energy_minimizer.hpp"
#include "solvers/gradient_flow.hpp"

namespace cpm {
namespace {

struct RelaxedGas {
  double radius_from_moment;
  double outermost;
  double ks;
};

// How the particles reach the equilibrium: the explicit gradient flow to t_end, or the minimiser.
enum class Relaxation { gradient_flow, newton, lbfgs };

RelaxedGas relax(const InteractionKernel& kernel, int d, int n, double radius, double gamma,
                 double t_end, Relaxation how) {
  InitialLaw law;
  law.centre = Eigen::VectorXd::Zero(d);
  law.scale = 0.5;
  Particles p = sample_particles(law, n, 7, 0);
  if (how == Relaxation::gradient_flow) {
    ForceField forces(std::make_shared<QuadraticPotential>(1.0), make_reference_pair_sum(kernel),
                      1.0);
    GradientFlowIntegrator flow(forces, Domain::whole_space(d),
                                GradientFlowParameters{1e-9, 1e-7, 1e-3});
    flow.advance_to(p, t_end);
  } else {
    ForceField forces(std::make_shared<QuadraticPotential>(1.0), make_blocked_pair_sum(kernel),
                      1.0);
    DriftJacobian jacobian(forces, Domain::whole_space(d), make_pair_hessian(kernel));
    EnergyMinimizer minimizer(
        forces, &jacobian, Domain::whole_space(d),
        {how == Relaxation::newton ? MinimizerMethod::newton : MinimizerMethod::lbfgs, 1e-10, 20000,
         1e-3});
    const MinimizationResult r = minimizer.minimize(p.positions);
    EXPECT_TRUE(r.converged) << r.stop_reason;
  }

  Eigen::VectorXd r = radii(p.positions, Eigen::VectorXd::Zero(d));
  std::sort(r.begin(), r.end());
  const double ev = 0.5 * d / (0.5 * d + gamma + 1.0);
  RelaxedGas out{std::sqrt(r.squaredNorm() / n / ev), r[n - 1], 0.0};
  for (int k = 0; k < n; ++k) {
    const double v = std::min(1.0, r[k] * r[k] / (radius * radius));
    const double cdf = boost::math::ibeta(0.5 * d, gamma + 1.0, v);
    out.ks = std::max({out.ks, std::abs(cdf - double(k) / n), std::abs(cdf - double(k + 1) / n)});
  }
  return out;
}

void check_equilibrium(const char* name, const InteractionKernel& kernel, int d, double radius,
                       double gamma, double rate, std::vector<int> sizes, double t_end,
                       Relaxation how = Relaxation::gradient_flow, double max_ks = 0.1) {
  std::vector<RelaxedGas> gases;
  for (int n : sizes) {
    gases.push_back(relax(kernel, d, n, radius, gamma, t_end, how));
    const RelaxedGas& g = gases.back();
    std::printf("%s N=%d: R from moment %.5f (exact %.5f, error %.2f%%), outermost %.5f, KS %.4f\n",
                name, n, g.radius_from_moment, radius, 100 * (g.radius_from_moment / radius - 1),
                g.outermost, g.ks);
    EXPECT_LT(g.outermost, radius * 1.01) << name << " N=" << n;
    EXPECT_LT(g.radius_from_moment, radius) << name << " N=" << n;
    if (gases.size() > 1) {
      EXPECT_LT(g.ks, gases[gases.size() - 2].ks) << name << " N=" << n;
      EXPECT_GT(g.radius_from_moment, gases[gases.size() - 2].radius_from_moment) << name;
    }
  }
  const std::size_t m = gases.size();
  const double r1 = gases[m - 3].radius_from_moment, r2 = gases[m - 2].radius_from_moment,
               r3 = gases[m - 1].radius_from_moment;
  const double observed_rate = std::log2((r2 - r1) / (r3 - r2));
  const double extrapolated = (std::exp2(rate) * r3 - r2) / (std::exp2(rate) - 1.0);
  std::printf(
      "%s: observed finite-N exponent %.3f (theory %.3f); extrapolated R %.5f (error %.2f%%)\n",
      name, observed_rate, rate, extrapolated, 100 * (extrapolated / radius - 1));
  EXPECT_NEAR(observed_rate, rate, 0.15) << name;
  EXPECT_NEAR(extrapolated, radius, 0.02 * radius) << name;
  EXPECT_LT(gases.back().ks, max_ks) << name;
}

TEST(RieszEquilibrium, OneDimensionalRieszHalfMatchesClosedFormProfile) {
  check_equilibrium("1D s=0.5", InteractionKernel::power(0.5), 1, 1.399635, 0.75, 0.5,
                    {25, 50, 100}, 8.0);
}

TEST(RieszEquilibrium, OneDimensionalLogGasMatchesSemicircle) {
  // For the log gas the correction is O(log N / N): the exponent over N = 50..200 is close to 1.
  check_equilibrium("1D log", InteractionKernel::log(), 1, std::sqrt(2.0), 0.5, 1.0, {50, 100, 200},
                    8.0);
}

TEST(RieszEquilibrium, TwoDimensionalRieszSMatchesClosedFormProfile) {
  check_equilibrium("2D s=1.2", InteractionKernel::power(1.2), 2, 1.518357, 0.6, 0.4,
                    {100, 200, 400}, 8.0);
}

TEST(RieszEquilibrium, MinimiserMatchesTheClosedFormProfilesInOneTwoAndThreeDimensions) {
  check_equilibrium("Newton 1D s=0.5", InteractionKernel::power(0.5), 1, 1.399635, 0.75, 0.5,
                    {25, 50, 100}, 0.0, Relaxation::newton);
  check_equilibrium("Newton 1D log", InteractionKernel::log(), 1, std::sqrt(2.0), 0.5, 1.0,
                    {50, 100, 200}, 0.0, Relaxation::newton);
  check_equilibrium("Newton 2D s=1.2", InteractionKernel::power(1.2), 2, 1.518357, 0.6, 0.4,
                    {100, 200, 400}, 0.0, Relaxation::newton);
  // The finite Coulomb ball is layered in shells, so its radial law approaches the uniform one
  // slowly in the KS distance (0.35, 0.29, 0.23 at these N) while R converges at the known rate.
  check_equilibrium("Newton 3D Coulomb", InteractionKernel::power(1.0), 3, 1.0, 0.0, 2.0 / 3.0,
                    {100, 200, 400}, 0.0, Relaxation::newton, 0.25);
}

TEST(RieszEquilibrium, LbfgsMatchesTheClosedFormProfilesInTwoAndThreeDimensions) {
  // L-BFGS stops in one of many nearby local minima, which one depends on rounding: the 2D KS at
  // N = 400 is 0.094 with GCC -O3 and 0.100 with clang -O1 (`make sanitize`).
  check_equilibrium("L-BFGS 2D s=1.2", InteractionKernel::power(1.2), 2, 1.518357, 0.6, 0.4,
                    {100, 200, 400}, 0.0, Relaxation::lbfgs, 0.11);
  check_equilibrium("L-BFGS 3D Coulomb", InteractionKernel::power(1.0), 3, 1.0, 0.0, 2.0 / 3.0,
                    {100, 200, 400}, 0.0, Relaxation::lbfgs, 0.25);
}

}  // namespace
}  // namespace cpm
