// `cpm run [CONFIG.toml]`: the main job, on the embedded default when no file is given; with a
// [grid] section the particles run side by side with the McKean–Vlasov grid solver.
#include <iostream>
#include <memory>

#include "apps/commands.hpp"
#include "config/run_config.hpp"
#include "default_config.hpp"
#include "experiments/run/particle_run.hpp"
#include "experiments/run/side_by_side.hpp"

namespace cpm::app {

void add_run_command(CLI::App& app) {
  struct Options {
    std::string config;
    RunOptions run;
    std::string output;
    bool print_default = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* run =
      app.add_subcommand("run",
                         "evolve a particle system, side by side with the grid solver when the "
                         "config has a [grid] section (embedded default if no CONFIG)");
  run->add_option("config", options->config, "TOML configuration file");
  run->add_flag("--overwrite", options->run.overwrite,
                "replace results in an existing output folder");
  run->add_option("--restart", options->run.restart,
                  "continue from the last frame of an earlier run's run.h5 (same model; "
                  "dynamics.t_end and dynamics.outputs may differ), into a new output folder");
  run->add_option("--output", options->output,
                  "write into this folder instead of the configuration's output.directory");
  run->add_flag("--print-default", options->print_default,
                "print the embedded default configuration");
  run->callback([options] {
    if (options->print_default) {
      std::cout << kDefaultRunConfig;
      return;
    }
    RunConfig config = options->config.empty()
                           ? parse_run_config(kDefaultRunConfig, "embedded default")
                           : load_run_config(options->config);
    if (!options->output.empty()) config.output.directory = options->output;
    if (config.grid)
      run_side_by_side(config, options->run);
    else
      run_particles(config, options->run);
  });
}

}  // namespace cpm::app
