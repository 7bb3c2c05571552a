#include "solvers/gradient_flow.hpp"

#include <algorithm>
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
  // State holds the (N, d) column-major position matrix; derivative = −F.
  x_ = Eigen::Map<const Eigen::MatrixXd>(state.data(), n_, d_);
  forces_.compute(x_, drift_, nullptr);
  Eigen::Map<Eigen::MatrixXd>(derivative.data(), n_, d_) = -drift_;
}

void GradientFlowIntegrator::advance_to(Particles& particles, double t_end) {
  n_ = particles.size();
  d_ = particles.dim();
  state_.assign(particles.positions.data(), particles.positions.data() + n_ * d_);
  auto system = [this](const State& s, State& ds, double) { rhs(s, ds); };
  int consecutive_failures = 0;
  while (time_ < t_end) {
    double dt = std::min(dt_, t_end - time_);
    const bool clipped = dt < dt_;  // shortened only to land on t_end
    if (stepper_.try_step(system, state_, time_, dt) == odeint::success) {
      // try_step advanced time_ and proposed the next dt; project onto D.
      Eigen::Map<Eigen::MatrixXd> x(state_.data(), n_, d_);
      x_ = x;
      domain_.project_all(x_);
      x = x_;
      ++accepted_steps_;
      consecutive_failures = 0;
      if (!clipped) dt_ = dt;
    } else {
      if (++consecutive_failures > 500)
        throw std::runtime_error("gradient flow: step size control failed");
      dt_ = dt;
    }
  }
  time_ = t_end;
  particles.positions = Eigen::Map<const Eigen::MatrixXd>(state_.data(), n_, d_);
}

}  // namespace cpm
