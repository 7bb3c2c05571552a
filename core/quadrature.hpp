#pragma once
// Gauss–Legendre rules and an adaptive 1D integrator, for the cell integrals of the grid solver
// (kernel weights, cell averages of initial densities).
#include <functional>
#include <vector>

namespace cpm {

struct GaussLegendreRule {
  std::vector<double> nodes, weights;  // on [−1, 1]
};

// The q-point rule (q ≥ 1), exact for polynomials of degree 2q − 1; nodes by Newton's method
// on the Legendre polynomial, accurate to rounding.
GaussLegendreRule gauss_legendre(int q);

// ∫_a^b f to an estimated error below max(absolute_tolerance, relative_tolerance · |integral|):
// by Boost.Math's tanh–sinh quadrature (double-exponential; integrable singularities at a or b,
// such as |z|^{-s} or log|z| at 0, cost it nothing), and where that does not reach the tolerance
// (a kink or jump inside [a, b]) by globally adaptive bisection with a 10-point Gauss–Legendre
// rule.
double integrate_adaptive(const std::function<double(double)>& f, double a, double b,
                          double relative_tolerance = 1e-13, double absolute_tolerance = 1e-300);

}  // namespace cpm
