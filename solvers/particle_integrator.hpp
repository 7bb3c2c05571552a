#pragma once
// What the runners need of a particle time integrator: advance to a time, report the clock, and
// save and restore everything a continued run needs (checkpoints, `cpm run --restart`).
#include <cstdint>
#include <map>
#include <string>

#include "core/particles.hpp"
#include "physics/energy_terms.hpp"

namespace cpm {

// An integrator's state by name: its clock, its step counter (the random streams' position) and
// any adaptive state. Stored as doubles, exact for counters below 2^53.
using IntegratorState = std::map<std::string, double>;

class ParticleIntegrator {
 public:
  virtual ~ParticleIntegrator() = default;
  // Advances the particles from time() to t (t ≥ time()).
  virtual void advance_to(Particles& particles, double t) = 0;
  virtual double time() const = 0;
  // Steps taken since t = 0 (accepted steps for adaptive integrators).
  virtual std::uint64_t steps_taken() const = 0;

  virtual IntegratorState save_state() const = 0;
  // Continues from a saved state: the next advance_to gives bit for bit what the run that saved
  // it would have given. Throws std::invalid_argument naming a missing or impossible entry.
  virtual void restore_state(const IntegratorState& state) = 0;
};

// The entry `name` of `state`, or std::invalid_argument naming it.
double state_entry(const IntegratorState& state, const std::string& name);

}  // namespace cpm
