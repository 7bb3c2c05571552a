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
#include "parallel/rank_group.hpp"

namespace cpm::app {

Command run_command() {
  struct Options {
    std::string config;
    CommandOptions run;
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
        // Under mpirun the ranks hold one system between them (docs/distributed.md §4); the
        // first rank writes the output and reports a failure of any rank.
        std::unique_ptr<MpiEnvironment> mpi;
        RankGroup ranks;
        if (launched_ranks() > 1) {
          mpi = std::make_unique<MpiEnvironment>();
          ranks = RankGroup(MPI_COMM_WORLD);
        }
        RunConfig config;
        ranks.agree([&] {
          config = options->config.empty() ? parse_run_config(kDefaultRunConfig, "embedded default")
                                           : load_run_config(options->config);
        });
        if (!options->output.empty()) config.output.directory = options->output;
        options->run.progress = !options->quiet;
        if (config.grid)
          run_side_by_side(config, options->run, ranks);
        else
          run_particles(config, options->run, ranks);
      }};
}

}  // namespace cpm::app
