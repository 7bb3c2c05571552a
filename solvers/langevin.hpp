#pragma once
// Projected Euler–Maruyama for the overdamped Langevin system (Algorithm 1, docs/model.md §1):
//   ω_k ← Π_D( ω_k − η F_k + √(2η/β) ζ_k ),   ζ_k ~ N(0, I).
// The noise of particle k at step t comes from the stream (seed, replica, k) at position t, so
// trajectories depend on the seed only, never on the thread count.
#include <cstdint>

#include "core/domain.hpp"
#include "parallel/thread_governor.hpp"
#include "solvers/force_field.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

struct LangevinParameters {
  double step = 1e-3;  // η
  double beta = 1.0;   // inverse temperature; +inf gives plain projected gradient descent
  std::uint64_t seed = 1;
  std::uint64_t replica = 0;
};

class LangevinIntegrator final : public ParticleIntegrator {
 public:
  LangevinIntegrator(ForceField& forces, Domain domain, LangevinParameters parameters);

  void step(Particles& particles);
  void advance_to(Particles& particles, double t) override;
  double time() const override { return static_cast<double>(steps_) * parameters_.step; }

  std::uint64_t steps_taken() const override { return steps_; }
  // {"langevin.steps"}: the clock is steps · η and the noise streams' position is the step.
  IntegratorState save_state() const override;
  void restore_state(const IntegratorState& state) override;
  const LangevinParameters& parameters() const { return parameters_; }

 private:
  ForceField& forces_;
  Domain domain_;
  LangevinParameters parameters_;
  std::uint64_t steps_ = 0;
  Eigen::MatrixXd drift_;
  ThreadGovernor governor_;  // each step on the thread count the machine's load favours
};

}  // namespace cpm
