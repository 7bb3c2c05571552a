#include "solvers/minimizer_integrator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cpm {

void MinimizerIntegrator::advance_to(Particles& particles, double t) {
  if (!done_) {
    history_.clear();
    result_ = minimizer_.minimize(particles.positions, [&](const MinimizerProgress& p) {
      history_.push_back(p);
      report(time_, p.step, static_cast<std::uint64_t>(p.iteration), p.gradient_norm);
    });
    done_ = true;
    if (!result_.converged)
      throw std::runtime_error("energy minimisation stopped after " +
                               std::to_string(result_.iterations) + " iterations (" +
                               result_.stop_reason + ") with projected gradient norm " +
                               std::to_string(result_.gradient_norm) + " > dynamics.tolerance");
  }
  time_ = std::max(time_, t);
}

IntegratorState MinimizerIntegrator::save_state() const {
  return {{"minimize.time", time_},
          {"minimize.iterations", static_cast<double>(result_.iterations)},
          {"minimize.done", done_ ? 1.0 : 0.0}};
}

void MinimizerIntegrator::restore_state(const IntegratorState& state) {
  const double time = state_entry(state, "minimize.time");
  const double iterations = state_entry(state, "minimize.iterations");
  if (!(std::isfinite(time) && time >= 0.0))
    throw std::invalid_argument("solver state minimize.time is not a time");
  if (!(iterations >= 0.0 && iterations < 2147483647.0 && iterations == std::floor(iterations)))
    throw std::invalid_argument("solver state minimize.iterations is not an iteration count");
  time_ = time;
  result_.iterations = static_cast<int>(iterations);
  done_ = state_entry(state, "minimize.done") != 0.0;
}

}  // namespace cpm
