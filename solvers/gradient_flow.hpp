#pragma once
// The deterministic gradient flow (β = ∞), dω_k/dt = −F_k, integrated with Boost.Odeint's
// adaptive Dormand–Prince 5(4) controlled stepper; after every accepted step the particles are
// projected onto D (the zero-flux wall).
#include <boost/numeric/odeint.hpp>
#include <vector>

#include "core/domain.hpp"
#include "solvers/force_field.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

struct GradientFlowParameters {
  double absolute_tolerance = 1e-8;
  double relative_tolerance = 1e-6;
  double initial_step = 1e-3;
};

class GradientFlowIntegrator final : public ParticleIntegrator {
 public:
  GradientFlowIntegrator(ForceField& forces, Domain domain, GradientFlowParameters parameters);

  void advance_to(Particles& particles, double t) override;
  double time() const override { return time_; }
  std::uint64_t steps_taken() const override { return accepted_steps_; }
  // {"gradient_flow.time", "gradient_flow.step", "gradient_flow.accepted_steps"}: the clock, the
  // step size the controller proposes next, and the step counter.
  IntegratorState save_state() const override;
  void restore_state(const IntegratorState& state) override;

 private:
  using State = std::vector<double>;
  void rhs(const State& state, State& derivative);

  ForceField& forces_;
  Domain domain_;
  GradientFlowParameters parameters_;
  double time_ = 0.0;
  double dt_;
  std::uint64_t accepted_steps_ = 0;
  Eigen::Index n_ = 0, d_ = 0;
  Eigen::MatrixXd x_, drift_;
  State state_, previous_;  // previous_: the state before the step being tried
  boost::numeric::odeint::controlled_runge_kutta<boost::numeric::odeint::runge_kutta_dopri5<State>>
      stepper_;
};

}  // namespace cpm
