#include "core/quadrature.hpp"

#include <boost/math/quadrature/tanh_sinh.hpp>
#include <cmath>
#include <numbers>
#include <queue>
#include <stdexcept>

namespace cpm {

GaussLegendreRule gauss_legendre(int q) {
  if (q < 1) throw std::invalid_argument("a Gauss–Legendre rule needs at least one node");
  GaussLegendreRule rule;
  rule.nodes.resize(q);
  rule.weights.resize(q);
  for (int i = 0; i < (q + 1) / 2; ++i) {
    // Chebyshev-like first guess, then Newton on P_q; p1 = P_q(x), dp = P_q'(x).
    double x = std::cos(std::numbers::pi * (i + 0.75) / (q + 0.5));
    double dp = 1.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p0 = 1.0, p1 = x;
      for (int k = 2; k <= q; ++k) {
        const double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = q * (x * p1 - p0) / (x * x - 1.0);
      const double dx = p1 / dp;
      x -= dx;
      if (std::abs(dx) < 1e-16) break;
    }
    const double w = 2.0 / ((1.0 - x * x) * dp * dp);
    rule.nodes[i] = -x;
    rule.nodes[q - 1 - i] = x;
    rule.weights[i] = rule.weights[q - 1 - i] = w;
  }
  return rule;
}

namespace {

struct Piece {
  double a, b, value, error;
  bool operator<(const Piece& o) const { return error < o.error; }
};

Piece integrate_piece(const std::function<double(double)>& f, double a, double b,
                      const GaussLegendreRule& rule) {
  // The error estimate compares the rule on [a, b] with the rule on its two halves.
  auto apply = [&](double lo, double hi) {
    const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
    double s = 0.0;
    for (std::size_t i = 0; i < rule.nodes.size(); ++i)
      s += rule.weights[i] * f(mid + half * rule.nodes[i]);
    return s * half;
  };
  const double whole = apply(a, b);
  const double m = 0.5 * (a + b);
  const double halves = apply(a, m) + apply(m, b);
  return {a, b, halves, std::abs(halves - whole)};
}

// Globally adaptive bisection: the piece with the largest error estimate is halved until the
// sum of the estimates is below the tolerance.
double integrate_by_bisection(const std::function<double(double)>& f, double a, double b,
                              double relative_tolerance, double absolute_tolerance) {
  static const GaussLegendreRule rule = gauss_legendre(10);
  std::priority_queue<Piece> pieces;
  pieces.push(integrate_piece(f, a, b, rule));
  double total = pieces.top().value, error = pieces.top().error;
  for (int split = 0; split < 2000; ++split) {
    if (error <= std::max(absolute_tolerance, relative_tolerance * std::abs(total))) break;
    const Piece worst = pieces.top();
    pieces.pop();
    const double m = 0.5 * (worst.a + worst.b);
    const Piece left = integrate_piece(f, worst.a, m, rule),
                right = integrate_piece(f, m, worst.b, rule);
    total += left.value + right.value - worst.value;
    error += left.error + right.error - worst.error;
    pieces.push(left);
    pieces.push(right);
  }
  // Re-sum to remove the drift of the running updates.
  total = 0.0;
  while (!pieces.empty()) {
    total += pieces.top().value;
    pieces.pop();
  }
  return total;
}

}  // namespace

double integrate_adaptive(const std::function<double(double)>& f, double a, double b,
                          double relative_tolerance, double absolute_tolerance) {
  if (a == b) return 0.0;
  // Thread safe: the integrator extends its shared abscissa tables under a lock.
  static boost::math::quadrature::tanh_sinh<double> tanh_sinh;
  try {
    double error = 0.0;
    const double value = tanh_sinh.integrate(f, a, b, relative_tolerance, &error);
    if (std::isfinite(value) &&
        error <= std::max(absolute_tolerance, relative_tolerance * std::abs(value)))
      return value;
  } catch (const std::exception&) {
    // A non-finite value of f at a node: the bisection below meets it or reports it.
  }
  return integrate_by_bisection(f, a, b, relative_tolerance, absolute_tolerance);
}

}  // namespace cpm
