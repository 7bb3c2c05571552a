#pragma once
// What the runners need of a particle time integrator: advance to a time, report the clock.
#include "core/particles.hpp"
#include "physics/energy_terms.hpp"

namespace cpm {

class ParticleIntegrator {
 public:
  virtual ~ParticleIntegrator() = default;
  // Advances the particles from time() to t (t ≥ time()).
  virtual void advance_to(Particles& particles, double t) = 0;
  virtual double time() const = 0;
};

}  // namespace cpm
