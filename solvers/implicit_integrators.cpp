#include "solvers/implicit_integrators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/random_stream.hpp"
#include "solvers/krylov.hpp"

namespace cpm {

namespace {

// ROS3P in the transformed form of E. Hairer, G. Wanner, Solving ODEs II, §IV.7:
//   (I/(γh) − ∂f/∂y) U_i = f(y + Σ_j a_ij U_j) + Σ_j (c_ij/h) U_j,   y⁺ = y + Σ m_i U_i,
// with f = −F, so ∂f/∂y = −J. The embedded solution uses m̂; a32 = 0 and a31 = a21, so the third
// stage reuses the second stage's force.
constexpr double kGamma = 0.7886751345948129;  // 1/2 + √3/6
constexpr double kA21 = 1.267949192431123;     // 1/γ
constexpr double kC21 = -1.607695154586736;
constexpr double kC31 = -3.464101615137755;
constexpr double kC32 = -1.732050807568877;
constexpr double kM[3] = {2.0, 0.5773502691896258, 0.4226497308103742};
constexpr double kMHat[3] = {2.113248654051871, 1.0, 0.4226497308103742};
// Step control: safety factor, bounds on the change of h, order of the error estimate + 1.
constexpr double kSafety = 0.9, kMinFactor = 0.2, kMaxFactor = 5.0, kErrorExponent = 1.0 / 3.0;
constexpr int kMaxRejections = 200;
constexpr int kMaxImplicitCgIterations = 2000;

double check_count(const IntegratorState& state, const std::string& name) {
  const double steps = state_entry(state, name);
  if (!(steps >= 0.0 && steps < 0x1p53 && steps == std::floor(steps)))
    throw std::invalid_argument("solver state " + name + " is not a step count");
  return steps;
}

}  // namespace

ImplicitGradientFlowIntegrator::ImplicitGradientFlowIntegrator(
    ForceField& forces, DriftJacobian& jacobian, Domain domain,
    ImplicitGradientFlowParameters parameters)
    : forces_(forces),
      jacobian_(jacobian),
      domain_(std::move(domain)),
      parameters_(parameters),
      h_(parameters.fixed_step > 0.0 ? parameters.fixed_step : parameters.initial_step) {
  if (!(parameters_.initial_step > 0.0))
    throw std::invalid_argument("implicit gradient flow initial step must be positive");
  if (!(parameters_.absolute_tolerance > 0.0 && parameters_.relative_tolerance > 0.0))
    throw std::invalid_argument("implicit gradient flow tolerances must be positive");
  if (!(parameters_.linear_tolerance > 0.0))
    throw std::invalid_argument("implicit gradient flow linear tolerance must be positive");
}

bool ImplicitGradientFlowIntegrator::solve(const Eigen::MatrixXd& rhs, Eigen::MatrixXd& u,
                                           double shift, double h, const Eigen::MatrixXd& scale) {
  // The error of u is at most γh‖r‖ for J ≥ 0 (the operator is ≥ I/(γh)); it must stay below
  // linear_tolerance in the weighted max norm of the step's error test.
  const double bound = parameters_.linear_tolerance / (kGamma * h);
  const KrylovResult r = conjugate_gradient(
      [&](const Eigen::MatrixXd& v, Eigen::MatrixXd& out) { jacobian_.apply(v, out, shift); },
      [&](const Eigen::MatrixXd& v, Eigen::MatrixXd& z) { jacobian_.precondition(v, z, shift); },
      rhs, u,
      [&](const Eigen::MatrixXd& residual) {
        return (residual.array().abs() / scale.array()).maxCoeff() <= bound;
      },
      kMaxImplicitCgIterations);
  linear_iterations_ += static_cast<std::uint64_t>(r.iterations);
  return r.converged;
}

double ImplicitGradientFlowIntegrator::attempt(const Eigen::MatrixXd& x, double h,
                                               Eigen::MatrixXd& x_new) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!drift_valid_) {
    forces_.compute(x, drift_, nullptr);
    drift_valid_ = true;
  }
  if (!drift_.allFinite()) return inf;
  jacobian_.linearise(x, drift_, drift_);
  scale_ = parameters_.absolute_tolerance + parameters_.relative_tolerance * x.array().abs();
  const double shift = 1.0 / (kGamma * h);

  rhs_ = -drift_;
  jacobian_.restrict(rhs_);
  if (!solve(rhs_, u1_, shift, h, scale_)) return inf;
  stage_ = x + kA21 * u1_;
  domain_.project_all(stage_);
  forces_.compute(stage_, drift2_, nullptr);
  if (!drift2_.allFinite()) return inf;
  drift2_ = -drift2_;
  jacobian_.restrict(drift2_);
  rhs_ = drift2_ + (kC21 / h) * u1_;
  if (!solve(rhs_, u2_, shift, h, scale_)) return inf;
  rhs_ = drift2_ + (kC31 / h) * u1_ + (kC32 / h) * u2_;
  if (!solve(rhs_, u3_, shift, h, scale_)) return inf;

  x_new = x + kM[0] * u1_ + kM[1] * u2_ + kM[2] * u3_;
  low_ = x + kMHat[0] * u1_ + kMHat[1] * u2_ + kMHat[2] * u3_;
  domain_.project_all(x_new);
  domain_.project_all(low_);
  if (!x_new.allFinite()) return inf;
  scale_ = parameters_.absolute_tolerance +
           parameters_.relative_tolerance * x.array().abs().max(x_new.array().abs());
  return ((x_new - low_).array().abs() / scale_.array()).maxCoeff();
}

void ImplicitGradientFlowIntegrator::advance_to(Particles& particles, double t_end) {
  Eigen::MatrixXd& x = particles.positions;
  Eigen::MatrixXd x_new;
  drift_valid_ = false;
  const bool fixed = parameters_.fixed_step > 0.0;
  int rejections = 0;
  start_advance();
  while (time_ < t_end) {
    const double h = std::min(h_, t_end - time_);
    const bool clipped = h < h_;
    const double error = attempt(x, h, x_new);
    if (fixed && !std::isfinite(error))
      throw std::runtime_error("implicit gradient flow: a fixed step of " + std::to_string(h) +
                               " failed (non-finite force or linear solve)");
    if (fixed || error <= 1.0) {
      x.swap(x_new);
      drift_valid_ = false;
      time_ = clipped ? t_end : time_ + h;
      ++accepted_steps_;
      rejections = 0;
      if (!fixed && !clipped)
        h_ = h * std::clamp(error > 0.0 ? kSafety * std::pow(error, -kErrorExponent) : kMaxFactor,
                            kMinFactor, kMaxFactor);
      report(time_, h, accepted_steps_);
      if (time_ < t_end && stop_due()) return;
    } else {
      ++rejected_steps_;
      if (++rejections > kMaxRejections)
        throw std::runtime_error("implicit gradient flow: step size control failed at t = " +
                                 std::to_string(time_));
      h_ = h * (std::isfinite(error)
                    ? std::max(kMinFactor, kSafety * std::pow(error, -kErrorExponent))
                    : 0.25);
    }
  }
  time_ = t_end;
}

IntegratorState ImplicitGradientFlowIntegrator::save_state() const {
  return {{"implicit_gradient_flow.time", time_},
          {"implicit_gradient_flow.step", h_},
          {"implicit_gradient_flow.accepted_steps", static_cast<double>(accepted_steps_)}};
}

void ImplicitGradientFlowIntegrator::restore_state(const IntegratorState& state) {
  const double time = state_entry(state, "implicit_gradient_flow.time");
  const double h = state_entry(state, "implicit_gradient_flow.step");
  const double steps = check_count(state, "implicit_gradient_flow.accepted_steps");
  if (!(std::isfinite(time) && time >= 0.0))
    throw std::invalid_argument("solver state implicit_gradient_flow.time is not a time");
  if (!(std::isfinite(h) && h > 0.0))
    throw std::invalid_argument("solver state implicit_gradient_flow.step is not a positive step");
  time_ = time;
  h_ = h;
  accepted_steps_ = static_cast<std::uint64_t>(steps);
  drift_valid_ = false;
}

ImplicitLangevinIntegrator::ImplicitLangevinIntegrator(ForceField& forces, DriftJacobian& jacobian,
                                                       Domain domain,
                                                       ImplicitLangevinParameters parameters)
    : parameters_(parameters),
      minimizer_(forces, &jacobian, std::move(domain),
                 MinimizerParameters{MinimizerMethod::newton, parameters.tolerance,
                                     parameters.max_iterations, 1e-3}) {
  if (!(parameters_.step > 0.0)) throw std::invalid_argument("Langevin step must be positive");
  if (!(parameters_.beta > 0.0)) throw std::invalid_argument("beta must be positive");
}

void ImplicitLangevinIntegrator::step(Particles& particles) {
  Eigen::MatrixXd& x = particles.positions;
  const Eigen::Index n = x.rows(), d = x.cols();
  const double eta = parameters_.step;
  const double noise = std::isinf(parameters_.beta) ? 0.0 : std::sqrt(2.0 * eta / parameters_.beta);
  anchor_ = x;
  if (noise != 0.0)
    for (Eigen::Index k = 0; k < n; ++k) {
      RandomStream stream(parameters_.seed, RandomPurpose::langevin_noise, parameters_.replica,
                          particles.id(k), steps_);
      for (Eigen::Index a = 0; a < d; ++a) anchor_(k, a) += noise * stream.normal();
    }
  y_ = x;  // the current positions: finite energy, and the solution as η → 0
  const MinimizationResult r = minimizer_.minimize_proximal(y_, anchor_, eta);
  newton_iterations_ += static_cast<std::uint64_t>(r.iterations);
  if (!r.converged)
    throw std::runtime_error("implicit Langevin: the implicit step " + std::to_string(steps_) +
                             " did not converge (" + r.stop_reason + "; projected gradient " +
                             std::to_string(r.gradient_norm) + ")");
  x.swap(y_);
  ++steps_;
}

void ImplicitLangevinIntegrator::advance_to(Particles& particles, double t) {
  const auto target = static_cast<std::uint64_t>(std::llround(t / parameters_.step));
  start_advance();
  while (steps_ < target) {
    step(particles);
    report(time(), parameters_.step, steps_);
    if (steps_ < target && stop_due()) return;
  }
}

IntegratorState ImplicitLangevinIntegrator::save_state() const {
  return {{"implicit_langevin.steps", static_cast<double>(steps_)}};
}

void ImplicitLangevinIntegrator::restore_state(const IntegratorState& state) {
  steps_ = static_cast<std::uint64_t>(check_count(state, "implicit_langevin.steps"));
}

}  // namespace cpm
