// `cpm converge CONFIG.toml`: particles against the PDE as N grows, replicas per N;
// `mpirun -np K cpm converge CONFIG.toml` spreads the replicas over K ranks.
#include <memory>

#include "apps/commands.hpp"
#include "experiments/studies/convergence_study.hpp"

namespace cpm::app {

Command converge_command() {
  struct Options {
    std::string config, output;
    CommandOptions study;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {"converge",
          "convergence of the particle system to the McKean-Vlasov PDE as N grows",
          {value("config", &options->config, "TOML configuration file", true),
           flag("--overwrite", &options->study.overwrite,
                "replace results in an existing output folder"),
           value("--output", &options->output, "output folder (overrides output.directory)"),
           flag("--quiet", &options->quiet, "no progress output"),
           value("--restart", &options->study.restart,
                 "continue from the replicas.checkpoint a stopped study wrote")},
          [options] {
            options->study.progress = !options->quiet;
            ConvergenceConfig config = load_convergence_config(options->config);
            if (!options->output.empty()) config.model.output.directory = options->output;
            const MpiEnvironment mpi;
            run_convergence_study(mpi, config, options->study);
          }};
}

}  // namespace cpm::app
