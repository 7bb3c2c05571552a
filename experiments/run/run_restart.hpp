#pragma once
// `cpm run CONFIG --restart FILE`: continue a run from the checkpoint of its run.h5. The
// configuration must describe the same model and run; only dynamics.t_end and dynamics.outputs
// (how far to go and how often to write) may differ. The continued run writes into a new folder.
#include <functional>
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "io/h5md_reader.hpp"

namespace cpm {

// Reads and checks the checkpoint. Throws InputError (one line naming the file, or the key
// whose value differs) when the file is missing, damaged or holds no checkpoint, when its
// parameters differ from `config`'s, when it is at or past dynamics.t_end, or when
// output.directory is the folder the file is in. Nothing is written.
Checkpoint load_restart(const RunConfig& config, const std::string& path);

// A run's start: 0 when `path` is empty; otherwise loads the checkpoint (load_restart), hands it
// to `restore` (whose std::invalid_argument, e.g. a missing solver-state entry, becomes a
// InputError naming the file) and returns the checkpoint's time.
double restore_from(const RunConfig& config, const std::string& path,
                    const std::function<void(const Checkpoint&)>& restore);

// The output times t_k = t_end · k / outputs from t = 0, or, for a run that continues from
// `start` > 0, the start itself followed by the t_k after it. For integrator = "minimize" only
// t_end: the run writes one frame, the equilibrium.
std::vector<double> output_times(const DynamicsConfig& dynamics, double start = 0.0);

}  // namespace cpm
