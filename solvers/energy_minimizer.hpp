#pragma once
// Minimisers of the energy E_N over D^N, for the β = ∞ equilibria (docs/numerics.md §3.10):
// a projected truncated Newton method (Newton–CG with exact Hessian–vector products), projected
// L-BFGS preconditioned by the Newton systems' preconditioner, and projected FIRE. All stop on the
// projected-gradient norm
//     r(Ω) = ( (1/N) Σ_k |ω_k − Π_D(ω_k − G_k)|² )^{1/2},   G_k = F_k = N ∇_{ω_k} E_N,
// the root mean square of the displacement one unit step of projected gradient descent makes: the
// drift of a free particle, its tangential part on the wall. The minimisers do no I/O; they report
// every iteration to an observer.
//
// The same Newton method solves the proximal problems of the implicit schemes,
//     min over D^N of  N E_N(y) + |y − a|²/(2τ),   G = F + (y − a)/τ,
// whose minimiser is the drift-implicit step y = Π_D(a − τ F(y)).
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/domain.hpp"
#include "core/enum_names.hpp"
#include "solvers/drift_jacobian.hpp"
#include "solvers/force_field.hpp"
#include "solvers/lbfgs_memory.hpp"

namespace cpm {

enum class MinimizerMethod { newton, lbfgs, fire };
const std::vector<std::string>& names(MinimizerMethod);  // "newton", "lbfgs", "fire"

struct MinimizerParameters {
  MinimizerMethod method = MinimizerMethod::newton;
  double tolerance = 1e-8;  // stop when r(Ω) ≤ tolerance
  int max_iterations = 10000;
  double fire_step = 1e-3;  // FIRE: the first time step; it grows to at most 10 times that
};

// One iteration, as the observer sees it (iteration 0 is the start).
struct MinimizerProgress {
  int iteration = 0;
  double energy = 0.0;         // E_N (for a proximal problem: its objective divided by N)
  double gradient_norm = 0.0;  // r(Ω)
  double step = 0.0;           // Newton: the line-search factor; FIRE: the time step
  Eigen::Index active = 0;     // active constraints (particles on a ball's wall, box coordinates)
  std::uint64_t force_evaluations = 0;
  std::uint64_t hessian_products = 0;
  // Newton: conjugate-gradient iterations of this iteration; L-BFGS: the pairs in its memory
  int linear_iterations = 0;
};

struct MinimizationResult {
  int iterations = 0;
  bool converged = false;
  double energy = 0.0;
  double gradient_norm = 0.0;
  std::uint64_t force_evaluations = 0;
  std::uint64_t hessian_products = 0;
  std::string stop_reason;  // "converged", "max_iterations", or why the line search gave up
};

using MinimizerObserver = std::function<void(const MinimizerProgress&)>;

class EnergyMinimizer {
 public:
  // `jacobian` is needed by the Newton method; L-BFGS takes its preconditioner as H₀ when given,
  // else the scaled identity γ I (cheaper per step where the preconditioner costs more than the
  // steps it saves, e.g. dense pair Hessians in d > 3); FIRE ignores it.
  EnergyMinimizer(ForceField& forces, DriftJacobian* jacobian, Domain domain,
                  MinimizerParameters parameters);

  // Minimises E_N over D^N from x, which must lie in D with finite energy; x receives the result.
  MinimizationResult minimize(Eigen::MatrixXd& x, const MinimizerObserver& observe = {});
  // Minimises N E_N(y) + |y − anchor|²/(2τ) over D^N from y (Newton; ignores `method`).
  MinimizationResult minimize_proximal(Eigen::MatrixXd& y, const Eigen::MatrixXd& anchor,
                                       double tau, const MinimizerObserver& observe = {});

  const MinimizerParameters& parameters() const { return parameters_; }

 private:
  struct Point {
    Eigen::MatrixXd x, drift, gradient;
    double objective = 0.0, energy = 0.0, norm = 0.0;
    bool finite = false;
  };
  void evaluate(Point& p);
  // Resets the counters and evaluates the start x, which must have a finite energy.
  void begin(const Eigen::MatrixXd& x, Point& current);
  void report(const MinimizerObserver& observe, const Point& current, int iteration, double step,
              Eigen::Index active, int linear_iterations) const;
  // Backtracks along the projection arc x(α) = Π_D(x + α p) to the Armijo rule; false if no α
  // passes. `step` receives the α taken.
  bool line_search(const Point& current, const Eigen::MatrixXd& direction, Point& trial,
                   double& step);
  MinimizationResult newton(Eigen::MatrixXd& x, const MinimizerObserver& observe);
  MinimizationResult lbfgs(Eigen::MatrixXd& x, const MinimizerObserver& observe);
  MinimizationResult fire(Eigen::MatrixXd& x, const MinimizerObserver& observe);
  MinimizationResult finish(const Point& p, int iterations, bool converged, std::string reason);
  // The result, with x set to the current point, once r ≤ tolerance or the iterations are spent.
  std::optional<MinimizationResult> stop(const Point& current, int iteration, Eigen::MatrixXd& x);

  ForceField& forces_;
  DriftJacobian* jacobian_;
  ActiveConstraints constraints_;
  MinimizerParameters parameters_;
  // The proximal term: σ = 1/τ (0 for plain minimisation) and the anchor a.
  double sigma_ = 0.0;
  const Eigen::MatrixXd* anchor_ = nullptr;
  std::uint64_t force_evaluations_ = 0;
  std::uint64_t products_start_ = 0;
  Eigen::MatrixXd projected_;
  LbfgsMemory memory_;
};

}  // namespace cpm
