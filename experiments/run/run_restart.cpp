#include "experiments/run/run_restart.hpp"

#include <filesystem>
#include <sstream>

#include "experiments/run/run_output.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

// The keys a continued run may change.
const std::vector<std::string> kMayDiffer = {"dynamics.t_end", "dynamics.outputs"};

std::string value_of(const ParameterSet& p, const std::string& key) {
  const ParameterSet::Value* v = p.find(key);
  return v ? to_string(*v) : "absent";
}

bool same_folder(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::exists(a) && std::filesystem::equivalent(a, b, error);
}

}  // namespace

Checkpoint load_restart(const RunConfig& config, const std::string& path) {
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  if (same_folder(config.output.directory, folder.string()))
    throw InputError(config.source + ": output.directory: \"" + config.output.directory +
                     "\" holds the restart file " + path +
                     "; a continued run writes into a new folder");
  Checkpoint c = read_checkpoint(path);
  const ParameterSet expected = run_parameters(config);
  if (const auto key = first_difference(c.parameters, expected, kMayDiffer))
    throw InputError(path + ": parameter " + *key + " is " + value_of(c.parameters, *key) +
                     " in the checkpoint but " + value_of(expected, *key) + " in " + config.source +
                     "; a restart continues the same model");
  if (c.positions.rows() != config.n || c.positions.cols() != config.domain.dim())
    throw InputError(path + ": checkpoint positions do not have the configured shape");
  if (config.grid.has_value() != (c.density.size() > 0))
    throw InputError(path + (config.grid ? ": checkpoint holds no grid density for [grid]"
                                         : ": checkpoint holds a grid density but the "
                                           "configuration has no [grid]"));
  if (!(c.state.time < config.dynamics.t_end)) {
    std::ostringstream m;
    m << path << ": the checkpoint is at t = " << c.state.time
      << ", not before dynamics.t_end = " << config.dynamics.t_end << " of " << config.source;
    throw InputError(m.str());
  }
  return c;
}

double restore_from(const RunConfig& config, const std::string& path,
                    const std::function<void(const Checkpoint&)>& restore) {
  if (path.empty()) return 0.0;
  const Checkpoint checkpoint = load_restart(config, path);
  try {
    restore(checkpoint);
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": checkpoint: " + e.what());
  }
  return checkpoint.state.time;
}

std::vector<double> output_times(const DynamicsConfig& dynamics, double start) {
  if (dynamics.integrator == Integrator::minimize)
    return start < dynamics.t_end ? std::vector<double>{dynamics.t_end} : std::vector<double>{};
  std::vector<double> times;
  for (int k = 0; k <= dynamics.outputs; ++k) {
    const double t = dynamics.t_end * k / dynamics.outputs;
    if (t < start) continue;
    if (times.empty() && t > start) times.push_back(start);
    times.push_back(t);
  }
  return times;
}

}  // namespace cpm
