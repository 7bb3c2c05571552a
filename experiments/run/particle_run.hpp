#pragma once
// `cpm run` without a [grid] section: evolve the particle system from its initial law (or from
// a checkpoint) and record its observables.
#include <string>
#include <vector>

#include "config/run_config.hpp"

namespace cpm {

struct RunOptions {
  bool overwrite = false;
  bool progress = true;
  std::string restart;  // a run.h5 to continue from (experiments/run/run_restart.hpp); empty: t = 0
};

// Writes into config.output.directory: observables.csv (one row per output time), run.h5
// (H5MD), run.pvd (ParaView), observables.png and run_info.txt.
void run_particles(const RunConfig& config, const RunOptions& options);

// Plots `columns` of a run's table against time into `png`. Without gnuplot it says so on
// standard error and returns: the table is complete without the plot.
void plot_observables(const std::string& csv, const std::string& png,
                      const std::vector<std::string>& columns, const std::string& title,
                      const std::string& y_label, bool log_y);

}  // namespace cpm
