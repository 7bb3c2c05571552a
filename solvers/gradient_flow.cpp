#include "solvers/gradient_flow.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cpm {

namespace odeint = boost::numeric::odeint;

GradientFlowIntegrator::GradientFlowIntegrator(ForceField& forces, Domain domain,
                                               GradientFlowParameters parameters)
    : forces_(forces),
      domain_(std::move(domain)),
      parameters_(parameters),
      dt_(parameters.initial_step),
      stepper_(odeint::make_controlled<odeint::runge_kutta_dopri5<State>>(
          parameters.absolute_tolerance, parameters.relative_tolerance)) {
  if (!(parameters.initial_step > 0.0))
    throw std::invalid_argument("gradient flow initial step must be positive");
}

void GradientFlowIntegrator::rhs(const State& state, State& derivative) {
  // State holds the (N, d) column-major position matrix; derivative = −F at the stage point
  // projected onto D. A stage point of a particle held by the wall lies beyond it; the force there
  // is not the force at the wall, and its stages would disagree, which moved the flow's rest
  // point off the constrained equilibrium. Projected, the stages of a held particle all see the
  // wall point, and the rest points are exactly the constrained stationary points.
  x_ = Eigen::Map<const Eigen::MatrixXd>(state.data(), n_, d_);
  domain_.project_all(x_);
  forces_.compute(x_, drift_, nullptr);
  Eigen::Map<Eigen::MatrixXd>(derivative.data(), n_, d_) = -drift_;
}

void GradientFlowIntegrator::advance_to(Particles& particles, double t_end) {
  n_ = particles.size();
  d_ = particles.dim();
  state_.assign(particles.positions.data(), particles.positions.data() + n_ * d_);
  auto system = [this](const State& s, State& ds, double) { rhs(s, ds); };
  int consecutive_failures = 0;
  start_advance();
  while (time_ < t_end) {
    double dt = std::min(dt_, t_end - time_);
    const bool clipped = dt < dt_;  // shortened only to land on t_end
    const double start = time_, tried = dt;
    previous_ = state_;
    bool success = stepper_.try_step(system, state_, time_, dt) == odeint::success;
    if (success &&
        !std::all_of(state_.begin(), state_.end(), [](double v) { return std::isfinite(v); })) {
      // A step so long that projected stages put two particles on one wall point: the error
      // estimate is NaN, which the controller does not reject. Undo it: a failure, half the step.
      state_ = previous_;
      time_ = start;
      stepper_.reset();
      dt = 0.5 * tried;
      success = false;
    }
    if (success) {
      // try_step advanced time_ and proposed the next dt; project onto D. A projection that
      // moves a particle voids the derivative Dormand–Prince reuses (first same as last), so the
      // stepper recomputes it: the next step then depends on the positions only, which is what
      // lets a restart from saved positions continue bit for bit.
      Eigen::Map<Eigen::MatrixXd> x(state_.data(), n_, d_);
      x_ = x;
      domain_.project_all(x_);
      if (x_ != x) {
        x = x_;
        stepper_.reset();
      }
      ++accepted_steps_;
      consecutive_failures = 0;
      if (!clipped) dt_ = dt;
      report(time_, dt, accepted_steps_);
      if (time_ < t_end && stop_due()) break;
    } else {
      if (++consecutive_failures > 500)
        throw std::runtime_error("gradient flow: step size control failed");
      dt_ = dt;
    }
  }
  if (!stopped()) time_ = t_end;
  particles.positions = Eigen::Map<const Eigen::MatrixXd>(state_.data(), n_, d_);
}

IntegratorState GradientFlowIntegrator::save_state() const {
  return {{"gradient_flow.time", time_},
          {"gradient_flow.step", dt_},
          {"gradient_flow.accepted_steps", static_cast<double>(accepted_steps_)}};
}

void GradientFlowIntegrator::restore_state(const IntegratorState& state) {
  const double time = state_entry(state, "gradient_flow.time");
  const double dt = state_entry(state, "gradient_flow.step");
  const double steps = state_entry(state, "gradient_flow.accepted_steps");
  if (!(std::isfinite(time) && time >= 0.0))
    throw std::invalid_argument("solver state gradient_flow.time is not a time");
  if (!(std::isfinite(dt) && dt > 0.0))
    throw std::invalid_argument("solver state gradient_flow.step is not a positive step");
  if (!(steps >= 0.0 && steps < 0x1p53 && steps == std::floor(steps)))
    throw std::invalid_argument("solver state gradient_flow.accepted_steps is not a step count");
  time_ = time;
  dt_ = dt;
  accepted_steps_ = static_cast<std::uint64_t>(steps);
  stepper_.reset();  // the saved positions come without the reused derivative
}

}  // namespace cpm
