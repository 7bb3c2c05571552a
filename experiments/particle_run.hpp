#pragma once
// `cpm run`: evolve the particle system from its initial law and record observables.
#include <string>

#include "io/run_config.hpp"

namespace cpm {

struct RunOptions {
  bool overwrite = false;
  bool progress = true;
};

// Writes <output>/observables.csv and one particles_<k>.csv snapshot per output time.
void run_particles(const RunConfig& config, const RunOptions& options);

}  // namespace cpm
