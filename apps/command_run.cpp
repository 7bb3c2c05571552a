// `cpm run [CONFIG.toml]`: the main job, on the embedded default when no file is given; with a
// [grid] section the particles run side by side with the McKean–Vlasov grid solver.
#include <iostream>
#include <memory>
#include <string>

#include "apps/commands.hpp"
#include "config/run_config.hpp"
#include "default_config.hpp"
#include "experiments/run/particle_run.hpp"
#include "experiments/run/side_by_side.hpp"
#include "io/input_error.hpp"
#include "parallel/launch_environment.hpp"

namespace cpm::app {

Command run_command() {
  struct Options {
    std::string config;
    RunOptions run;
    std::string output;
    bool print_default = false, quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {
      "run",
      "evolve a particle system, side by side with the grid solver when the config has a "
      "[grid] section (embedded default if no CONFIG)",
      {value("config", &options->config, "TOML configuration file"),
       flag("--overwrite", &options->run.overwrite, "replace results in an existing output folder"),
       value("--restart", &options->run.restart,
             "continue from the last frame of an earlier run's run.h5 (same model; "
             "dynamics.t_end and dynamics.outputs may differ), into a new output folder"),
       value("--output", &options->output,
             "write into this folder instead of the configuration's output.directory"),
       flag("--quiet", &options->quiet, "no progress output"),
       flag("--print-default", &options->print_default,
            "print the embedded default configuration")},
      [options] {
        if (options->print_default) {
          std::cout << kDefaultRunConfig;
          return;
        }
        // One system is not split over ranks yet (docs/distributed.md): every rank would run the
        // whole system and race for the same files.
        if (const int ranks = launched_ranks(); ranks > 1)
          throw InputError("cpm run: started on " + std::to_string(ranks) +
                           " MPI ranks, but one system does not yet spread over ranks: run it on "
                           "one rank (cpm converge and cpm ldp spread their replicas)");
        RunConfig config = options->config.empty()
                               ? parse_run_config(kDefaultRunConfig, "embedded default")
                               : load_run_config(options->config);
        if (!options->output.empty()) config.output.directory = options->output;
        options->run.progress = !options->quiet;
        if (config.grid)
          run_side_by_side(config, options->run);
        else
          run_particles(config, options->run);
      }};
}

}  // namespace cpm::app
