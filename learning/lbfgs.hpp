#pragma once
// Limited-memory BFGS (Nocedal & Wright, Algorithm 7.4/7.5) with a backtracking Armijo line
// search, for smooth convex objectives such as the logistic-regression loss. Stops when max |∇f|
// falls below the tolerance, or when f no longer decreases beyond its rounding error.
#include <Eigen/Dense>
#include <functional>

namespace cpm {

struct LbfgsSettings {
  int memory = 10;
  int max_iterations = 300;
  double gradient_tolerance = 1e-6;  // stop when max |∇f| falls below
};

struct LbfgsResult {
  double value = 0.0;
  int iterations = 0;
  bool converged = false;
};

// f(x, gradient) returns f(x) and writes ∇f(x) into gradient. x is updated in place.
LbfgsResult minimise_lbfgs(const std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)>& f,
                           Eigen::VectorXd& x, const LbfgsSettings& settings);

}  // namespace cpm
