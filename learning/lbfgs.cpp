#include "learning/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

namespace cpm {

LbfgsResult minimise_lbfgs(const std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)>& f,
                           Eigen::VectorXd& x, const LbfgsSettings& settings) {
  const Eigen::Index n = x.size();
  Eigen::VectorXd g(n), g_new(n), x_new(n), direction(n);
  std::deque<Eigen::VectorXd> s_history, y_history;
  std::deque<double> rho_history;
  std::vector<double> alpha(static_cast<std::size_t>(settings.memory));
  LbfgsResult result;
  result.value = f(x, g);
  int stalled = 0;  // iterations whose decrease is below the rounding of f
  for (int it = 0; it < settings.max_iterations; ++it) {
    if (g.lpNorm<Eigen::Infinity>() < settings.gradient_tolerance) {
      result.converged = true;
      break;
    }
    // Two-loop recursion: direction = −H g.
    direction = -g;
    const int m = static_cast<int>(s_history.size());
    for (int i = m - 1; i >= 0; --i) {
      alpha[i] = rho_history[i] * s_history[i].dot(direction);
      direction -= alpha[i] * y_history[i];
    }
    if (m > 0) direction *= s_history.back().dot(y_history.back()) / y_history.back().squaredNorm();
    for (int i = 0; i < m; ++i) {
      const double beta = rho_history[i] * y_history[i].dot(direction);
      direction += (alpha[i] - beta) * s_history[i];
    }
    double slope = direction.dot(g);
    if (slope >= 0.0) {  // not a descent direction: restart from steepest descent
      direction = -g;
      slope = -g.squaredNorm();
      s_history.clear();
      y_history.clear();
      rho_history.clear();
    }
    // Backtracking line search with the Armijo condition; the first step of steepest descent
    // is scaled to unit length.
    double step = s_history.empty() ? 1.0 / std::max(1.0, direction.norm()) : 1.0;
    double value_new = 0.0;
    int backtracks = 0;
    for (;; ++backtracks) {
      x_new = x + step * direction;
      value_new = f(x_new, g_new);
      if (value_new <= result.value + 1e-4 * step * slope || backtracks >= 40) break;
      step *= 0.5;
    }
    if (backtracks >= 40) break;  // no progress possible at double precision
    const Eigen::VectorXd s = x_new - x, y = g_new - g;
    const double sy = s.dot(y);
    if (sy > 1e-12 * s.norm() * y.norm()) {
      if (static_cast<int>(s_history.size()) == settings.memory) {
        s_history.pop_front();
        y_history.pop_front();
        rho_history.pop_front();
      }
      s_history.push_back(s);
      y_history.push_back(y);
      rho_history.push_back(1.0 / sy);
    }
    const bool stall = result.value - value_new <= 1e-15 * std::max(1.0, std::abs(result.value));
    x.swap(x_new);
    g.swap(g_new);
    result.value = value_new;
    result.iterations = it + 1;
    stalled = stall ? stalled + 1 : 0;
    if (stalled >= 5) break;  // f no longer resolves the progress
  }
  if (g.lpNorm<Eigen::Infinity>() < settings.gradient_tolerance) result.converged = true;
  return result;
}

}  // namespace cpm
