#pragma once
// `cpm run`: evolve the particle system from its initial law and record observables.
#include <string>

#include "core/particles.hpp"
#include "io/run_config.hpp"

namespace cpm {

struct RunOptions {
  bool overwrite = false;
  bool progress = true;
};

// Writes <output>/observables.csv and one particles_<k>.csv snapshot per output time.
void run_particles(const RunConfig& config, const RunOptions& options);

// One snapshot: a header x0,x1,… and one row of coordinates per particle.
void write_particle_snapshot(const std::string& path, const Particles& particles);

}  // namespace cpm
