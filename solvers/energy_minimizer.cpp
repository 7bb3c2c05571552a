#include "solvers/energy_minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "solvers/krylov.hpp"

namespace cpm {

namespace {

// Newton: Armijo constant, halvings of the line search, conjugate-gradient iterations per step.
constexpr double kArmijo = 1e-4;
constexpr int kLineSearchHalvings = 60;
constexpr int kMaxNewtonCgIterations = 500;
// The largest forcing term: far from the minimum a looser solve (1/2) only halves the residual,
// and each Newton iteration then buys little for its force evaluation and linearisation; with
// 1/10 the crowded 1D gas at N = 10⁴ needs 71 iterations instead of 212 (bench/RESULTS.md).
constexpr double kMaxForcing = 0.1;
// L-BFGS: pairs kept, and iterations between renewals of the preconditioner. On the 2D disc at
// N = 2,000 memories of 5 to 50 and renewals every 10 to 50 iterations all need 650–1,030
// iterations; without renewal, 6,300 (bench/RESULTS.md).
constexpr int kLbfgsMemory = 20;
constexpr int kLbfgsRefresh = 20;
// Relative size of the rounding errors of the objective (a sum of N² pair terms, each relative
// 1e-16): a trial point whose objective is within it and whose gradient norm is smaller is taken,
// since the Armijo test cannot decide there.
constexpr double kObjectiveRounding = 1e-12;
// FIRE (E. Bitzek, P. Koskinen, F. Gähler, M. Moseler, P. Gumbsch, Phys. Rev. Lett. 97 (2006)
// 170201), with the parameters of the paper, LAMMPS and ASE.
constexpr int kFireDelay = 5;
constexpr double kFireGrow = 1.1, kFireShrink = 0.5, kFireAlpha = 0.1, kFireAlphaShrink = 0.99;
constexpr double kFireMaxStepFactor = 10.0;

// A length of D: the ball's radius, half the smallest side of a box, +inf for the whole space.
double domain_size(const Domain& domain) {
  switch (domain.kind()) {
    case Domain::Kind::ball:
      return domain.radius();
    case Domain::Kind::box:
      return 0.5 * (domain.upper() - domain.lower()).minCoeff();
    case Domain::Kind::whole_space:
      break;
  }
  return std::numeric_limits<double>::infinity();
}

double max_row_norm(const Eigen::MatrixXd& m) {
  return m.rows() == 0 ? 0.0 : std::sqrt(m.rowwise().squaredNorm().maxCoeff());
}

}  // namespace

const std::vector<std::string>& names(MinimizerMethod) {
  static const std::vector<std::string> all{"newton", "lbfgs", "fire"};
  return all;
}

EnergyMinimizer::EnergyMinimizer(ForceField& forces, DriftJacobian* jacobian, Domain domain,
                                 MinimizerParameters parameters)
    : forces_(forces),
      jacobian_(jacobian),
      constraints_(std::move(domain)),
      parameters_(std::move(parameters)),
      memory_(kLbfgsMemory) {
  if (parameters_.method == MinimizerMethod::newton && !jacobian_)
    throw std::invalid_argument("the newton minimiser needs the drift's Jacobian");
  if (!(parameters_.tolerance > 0.0))
    throw std::invalid_argument("minimiser tolerance must be positive");
  if (!(parameters_.fire_step > 0.0)) throw std::invalid_argument("FIRE step must be positive");
}

void EnergyMinimizer::evaluate(Point& p) {
  EnergyTerms terms;
  forces_.compute(p.x, p.drift, &terms);
  ++force_evaluations_;
  const double n = static_cast<double>(p.x.rows());
  p.energy = terms.total();
  p.objective = n * p.energy;
  p.gradient = p.drift;
  if (sigma_ != 0.0) {
    p.gradient += sigma_ * (p.x - *anchor_);
    p.objective += 0.5 * sigma_ * (p.x - *anchor_).squaredNorm();
  }
  p.finite = std::isfinite(p.objective) && p.gradient.allFinite();
  if (!p.finite) {
    p.norm = std::numeric_limits<double>::infinity();
    return;
  }
  projected_ = p.x - p.gradient;
  constraints_.domain().project_all(projected_);
  p.norm = std::sqrt((p.x - projected_).squaredNorm() / n);
}

MinimizationResult EnergyMinimizer::finish(const Point& p, int iterations, bool converged,
                                           std::string reason) {
  MinimizationResult r;
  r.iterations = iterations;
  r.converged = converged;
  r.energy = sigma_ != 0.0 ? p.objective / static_cast<double>(p.x.rows()) : p.energy;
  r.gradient_norm = p.norm;
  r.force_evaluations = force_evaluations_;
  r.hessian_products = jacobian_ ? jacobian_->products() - products_start_ : 0;
  r.stop_reason = std::move(reason);
  return r;
}

std::optional<MinimizationResult> EnergyMinimizer::stop(const Point& current, int iteration,
                                                        Eigen::MatrixXd& x) {
  const bool converged = current.norm <= parameters_.tolerance;
  if (!converged && iteration < parameters_.max_iterations) return std::nullopt;
  x = current.x;
  return finish(current, iteration, converged, converged ? "converged" : "max_iterations");
}

MinimizationResult EnergyMinimizer::minimize(Eigen::MatrixXd& x, const MinimizerObserver& observe) {
  sigma_ = 0.0;
  anchor_ = nullptr;
  if (parameters_.method == MinimizerMethod::fire) return fire(x, observe);
  return parameters_.method == MinimizerMethod::lbfgs ? lbfgs(x, observe) : newton(x, observe);
}

MinimizationResult EnergyMinimizer::minimize_proximal(Eigen::MatrixXd& y,
                                                      const Eigen::MatrixXd& anchor, double tau,
                                                      const MinimizerObserver& observe) {
  if (!(tau > 0.0)) throw std::invalid_argument("proximal step must be positive");
  sigma_ = 1.0 / tau;
  anchor_ = &anchor;
  MinimizationResult r = newton(y, observe);
  sigma_ = 0.0;
  anchor_ = nullptr;
  return r;
}

void EnergyMinimizer::begin(const Eigen::MatrixXd& x, Point& current) {
  force_evaluations_ = 0;
  products_start_ = jacobian_ ? jacobian_->products() : 0;
  current.x = x;
  evaluate(current);
  if (!current.finite)
    throw std::invalid_argument(
        "the starting configuration has a non-finite energy or force (particles at one point?)");
}

void EnergyMinimizer::report(const MinimizerObserver& observe, const Point& current, int iteration,
                             double step, Eigen::Index active, int linear_iterations) const {
  if (!observe) return;
  MinimizerProgress p;
  p.iteration = iteration;
  p.energy =
      sigma_ != 0.0 ? current.objective / static_cast<double>(current.x.rows()) : current.energy;
  p.gradient_norm = current.norm;
  p.step = step;
  p.active = active;
  p.force_evaluations = force_evaluations_;
  p.hessian_products = jacobian_ ? jacobian_->products() - products_start_ : 0;
  p.linear_iterations = linear_iterations;
  observe(p);
}

bool EnergyMinimizer::line_search(const Point& current, const Eigen::MatrixXd& direction,
                                  Point& trial, double& step) {
  // First capped so that no particle moves further than the size of D.
  const double longest = max_row_norm(direction);
  const double size = domain_size(constraints_.domain());
  double alpha = longest > size ? size / longest : 1.0;
  for (int halving = 0; halving < kLineSearchHalvings; ++halving, alpha *= 0.5) {
    trial.x = current.x + alpha * direction;
    constraints_.domain().project_all(trial.x);
    evaluate(trial);
    if (!trial.finite) continue;
    // Armijo along the projection arc (D. P. Bertsekas, SIAM J. Control Optim. 20 (1982)
    // 221–246): the decrease must be a fraction of the first-order prediction G·(x(α) − x).
    const double predicted = frobenius_dot(current.gradient, trial.x - current.x);
    const double rounding = kObjectiveRounding * std::abs(current.objective);
    if (trial.objective <= current.objective + kArmijo * std::min(predicted, 0.0) ||
        (trial.objective <= current.objective + rounding && trial.norm < current.norm)) {
      step = alpha;
      return true;
    }
  }
  return false;
}

MinimizationResult EnergyMinimizer::newton(Eigen::MatrixXd& x, const MinimizerObserver& observe) {
  Point current, trial;
  begin(x, current);
  Eigen::MatrixXd b, direction;
  int linear_iterations = 0;
  double step = 0.0;
  for (int iteration = 0;; ++iteration) {
    report(observe, current, iteration, step, jacobian_->constraints().count(), linear_iterations);
    if (std::optional<MinimizationResult> done = stop(current, iteration, x)) return *done;

    // The Newton direction on the allowed motions: (P J P + σ + curvature) p = −P G, solved to the
    // relative residual min(1/10, √r) (the forcing term of S. C. Eisenstat, H. F. Walker, SIAM J.
    // Sci. Comput. 17 (1996) 16–32, which makes the convergence superlinear).
    jacobian_->linearise(current.x, current.drift, current.gradient);
    b = -current.gradient;
    jacobian_->restrict(b);
    const double forcing = std::min(kMaxForcing, std::sqrt(current.norm));
    const double target = forcing * b.norm();
    const KrylovResult solve = conjugate_gradient(
        [&](const Eigen::MatrixXd& v, Eigen::MatrixXd& out) { jacobian_->apply(v, out, sigma_); },
        [&](const Eigen::MatrixXd& r, Eigen::MatrixXd& z) {
          jacobian_->precondition(r, z, sigma_);
        },
        b, direction, [&](const Eigen::MatrixXd& r) { return r.norm() <= target; },
        kMaxNewtonCgIterations);
    linear_iterations = solve.iterations;
    if (!(frobenius_dot(b, direction) > 0.0) || !direction.allFinite())
      // Negative curvature at the first iteration: the preconditioned gradient instead.
      jacobian_->precondition(b, direction, sigma_);
    if (!line_search(current, direction, trial, step)) {
      x = current.x;
      return finish(current, iteration, false,
                    "the line search found no decrease (at the rounding floor of the energy?)");
    }
    std::swap(current, trial);
  }
}

MinimizationResult EnergyMinimizer::lbfgs(Eigen::MatrixXd& x, const MinimizerObserver& observe) {
  Point current, trial;
  begin(x, current);
  memory_.clear();
  // Without the Jacobian, H₀ = γ I with γ = sᵀy / yᵀy of the newest pair (Nocedal & Wright,
  // eq. 7.20), γ = 1 before the first.
  double gamma = 1.0;
  const LinearMap initial = [&](const Eigen::MatrixXd& q, Eigen::MatrixXd& z) {
    if (jacobian_)
      jacobian_->precondition(q, z, 0.0);
    else
      z = gamma * q;
    constraints_.restrict(z);
  };
  Eigen::MatrixXd b, direction, s, y;
  Eigen::Index active_count = -1;
  int since_linearised = kLbfgsRefresh;
  double step = 0.0;
  for (int iteration = 0;; ++iteration) {
    constraints_.update(current.x, current.gradient);
    report(observe, current, iteration, step, constraints_.count(), memory_.size());
    if (std::optional<MinimizationResult> done = stop(current, iteration, x)) return *done;

    // The pairs describe the objective restricted to one set of held particles: a new set clears
    // them. H₀ is the preconditioner of the Newton systems (§3.9) at a recent point.
    if (constraints_.count() != active_count) {
      memory_.clear();
      active_count = constraints_.count();
      since_linearised = kLbfgsRefresh;
    }
    if (jacobian_ && since_linearised >= kLbfgsRefresh) {
      jacobian_->linearise(current.x, current.drift, current.gradient);
      since_linearised = 0;
    }
    ++since_linearised;
    b = -current.gradient;
    constraints_.restrict(b);
    memory_.apply(b, direction, initial);
    // The stored pairs were restricted with the normals of earlier points: restricted again, the
    // held particles stay on the wall instead of drifting off it.
    constraints_.restrict(direction);
    if (!(frobenius_dot(b, direction) > 0.0) || !direction.allFinite()) {
      memory_.clear();
      initial(b, direction);
    }
    if (!line_search(current, direction, trial, step)) {
      x = current.x;
      return finish(current, iteration, false,
                    "the line search found no decrease (at the rounding floor of the energy?)");
    }
    // The change of the restricted gradient along the wall: held fixed, the normals miss the
    // turn of the wall, which adds (μ_k/R) s_k (the curvature term of the Lagrangian's Hessian).
    s = trial.x - current.x;
    y = trial.gradient - current.gradient;
    constraints_.restrict(s);
    constraints_.restrict(y);
    for (Eigen::Index k = 0; k < s.rows(); ++k)
      if (constraints_.active(k)) y.row(k) += constraints_.curvature(k) * s.row(k);
    memory_.push(s, y);
    if (const double sy = frobenius_dot(s, y); sy > 0.0) gamma = sy / frobenius_dot(y, y);
    std::swap(current, trial);
  }
}

MinimizationResult EnergyMinimizer::fire(Eigen::MatrixXd& x, const MinimizerObserver& observe) {
  Point current, trial;
  begin(x, current);
  const double size = domain_size(constraints_.domain());
  const double max_move =
      0.05 * (std::isfinite(size) ? size : 1.0 + current.x.cwiseAbs().maxCoeff());
  double dt = parameters_.fire_step, alpha = kFireAlpha;
  const double dt_max = kFireMaxStepFactor * parameters_.fire_step;
  int positive_steps = 0;
  Eigen::MatrixXd velocity = Eigen::MatrixXd::Zero(x.rows(), x.cols()), force, move;
  for (int iteration = 0;; ++iteration) {
    constraints_.update(current.x, current.gradient);
    report(observe, current, iteration, dt, constraints_.count(), 0);
    if (std::optional<MinimizationResult> done = stop(current, iteration, x)) return *done;
    // The force −G and the velocity restricted to the motions the wall allows.
    force = -current.gradient;
    constraints_.restrict(force);
    constraints_.restrict(velocity);
    const double power = frobenius_dot(force, velocity);
    if (power > 0.0) {
      const double force_norm = force.norm();
      if (force_norm > 0.0)
        velocity = (1.0 - alpha) * velocity + (alpha * velocity.norm() / force_norm) * force;
      if (++positive_steps > kFireDelay) {
        dt = std::min(dt * kFireGrow, dt_max);
        alpha *= kFireAlphaShrink;
      }
    } else {
      positive_steps = 0;
      dt *= kFireShrink;
      alpha = kFireAlpha;
      velocity.setZero();
    }
    // Semi-implicit Euler with the displacement of each particle capped.
    velocity += dt * force;
    move = dt * velocity;
    for (Eigen::Index k = 0; k < move.rows(); ++k) {
      const double length = move.row(k).norm();
      if (length > max_move) move.row(k) *= max_move / length;
    }
    trial.x = current.x + move;
    constraints_.domain().project_all(trial.x);
    evaluate(trial);
    if (!trial.finite) {  // particles met: go back, slow down
      dt *= kFireShrink;
      velocity.setZero();
      positive_steps = 0;
      continue;
    }
    std::swap(current, trial);
  }
}

}  // namespace cpm
