#pragma once
// What the runners need of a particle time integrator: advance to a time, report the clock, and
// save and restore everything a continued run needs (checkpoints, `cpm run --restart`).
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/particles.hpp"
#include "physics/energy_terms.hpp"

namespace cpm {

// An integrator's state by name: its clock, its step counter (the random streams' position) and
// any adaptive state. Stored as doubles, exact for counters below 2^53.
using IntegratorState = std::map<std::string, double>;

// Where an integrator is inside advance_to: its clock, the size of its last step and the steps
// taken. A minimiser reports its iterations as steps, its line-search factor or FIRE time step as
// step, and its projected-gradient norm as residual (negative for time integrators).
struct IntegratorProgress {
  double time = 0.0;
  double step = 0.0;
  std::uint64_t steps = 0;
  double residual = -1.0;
};
using IntegratorObserver = std::function<void(const IntegratorProgress&)>;

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

  // Called after every step inside advance_to (integrators do no I/O; a runner that wants a
  // progress line between output times installs one). Keep it cheap: it runs once per step.
  void set_observer(IntegratorObserver observer) { observer_ = std::move(observer); }

  // Asked after every step that leaves advance_to short of its t (a prompt stop: a runner asks
  // whether a stop signal came). When it answers true, advance_to returns at that step, stopped()
  // is true and time() is where it stopped; the state saved there continues bit for bit. A
  // minimiser is not asked: it stops only once it has converged.
  void set_stop_check(std::function<bool()> check) { stop_check_ = std::move(check); }
  // Whether the last advance_to returned early at a stop check.
  bool stopped() const { return stopped_; }

 protected:
  void report(double time, double step, std::uint64_t steps, double residual = -1.0) const {
    if (observer_) observer_({time, step, steps, residual});
  }
  // Called by advance_to before its first step.
  void start_advance() { stopped_ = false; }
  // Called by advance_to after a step that did not reach t: true when it must return now.
  bool stop_due() {
    stopped_ = stop_check_ && stop_check_();
    return stopped_;
  }

 private:
  IntegratorObserver observer_;
  std::function<bool()> stop_check_;
  bool stopped_ = false;
};

// The entry `name` of `state`, or std::invalid_argument naming it.
double state_entry(const IntegratorState& state, const std::string& name);

}  // namespace cpm
