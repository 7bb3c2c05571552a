// `cpm run [CONFIG.toml]`: the main job, on the embedded default when no file is given; with a
// [grid] section the particles run side by side with the McKean–Vlasov grid solver.
#include <iostream>
#include <memory>
#include <string>

#include "apps/commands.hpp"
#include "default_config.hpp"
#include "parallel/launch_environment.hpp"
#include "parallel/rank_group.hpp"

namespace cpm::app {

Command run_command() {
  struct Options : ResultFlags {
    bool print_default = false;
  };
  auto options = std::make_shared<Options>();
  std::vector<CommandArgument> arguments = result_arguments(
      *options,
      "continue from the last frame of an earlier run's run.h5 (same model; dynamics.t_end and "
      "dynamics.outputs may differ), into a new output folder",
      false);
  arguments.push_back(
      flag("--print-default", &options->print_default, "print the embedded default configuration"));
  return {"run",
          "evolve a particle system, side by side with the grid solver when the config has a "
          "[grid] section (embedded default if no CONFIG)",
          arguments, [options] {
            if (options->print_default) {
              std::cout << kDefaultRunConfig;
              return;
            }
            // Under mpirun the ranks hold one system between them (docs/distributed.md §4); the
            // first rank writes the output and reports a failure of any rank.
            std::unique_ptr<MpiEnvironment> mpi;
            CommandEnvironment environment;
            if (launched_ranks() > 1) {
              mpi = std::make_unique<MpiEnvironment>();
              environment.ranks = RankGroup(MPI_COMM_WORLD);
            }
            const std::string source =
                options->config.empty() ? "embedded default" : options->config;
            PreparedCommand run;
            environment.ranks.agree([&] {
              run = prepare_command("run", options->config_text(kDefaultRunConfig, source), source);
            });
            run.run(options->resolved(), environment);
          }};
}

}  // namespace cpm::app
