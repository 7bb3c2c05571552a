#pragma once
// The energy minimiser behind the integrator interface (docs/numerics.md §3.10), so that every
// command that builds an integrator can ask for the β = ∞ equilibrium with
// dynamics.integrator = "minimize". The first advance_to minimises; later calls only move the
// clock, since the equilibrium does not change. Every iteration is kept for the convergence table.
#include <vector>

#include "solvers/energy_minimizer.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

class MinimizerIntegrator final : public ParticleIntegrator {
 public:
  explicit MinimizerIntegrator(EnergyMinimizer& minimizer) : minimizer_(minimizer) {}

  // Throws std::runtime_error when the minimiser stops without reaching its tolerance.
  void advance_to(Particles& particles, double t) override;
  double time() const override { return time_; }
  std::uint64_t steps_taken() const override {
    return static_cast<std::uint64_t>(result_.iterations);
  }
  // {"minimize.time", "minimize.iterations", "minimize.done"}; a restored minimiser that is done
  // does not minimise again.
  IntegratorState save_state() const override;
  void restore_state(const IntegratorState& state) override;

  const MinimizationResult& result() const { return result_; }
  // Iteration 0 (the start) to the last one.
  const std::vector<MinimizerProgress>& history() const { return history_; }

 private:
  EnergyMinimizer& minimizer_;
  MinimizationResult result_;
  std::vector<MinimizerProgress> history_;
  bool done_ = false;
  double time_ = 0.0;
};

}  // namespace cpm
