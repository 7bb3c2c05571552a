// `cpm ldp CONFIG.toml`: tail probabilities and large-deviation rates over many replicas;
// `mpirun -np K cpm ldp CONFIG.toml` spreads the replicas over K ranks.
#include <memory>

#include "apps/commands.hpp"
#include "experiments/studies/ldp_study.hpp"

namespace cpm::app {

Command ldp_command() {
  struct Options {
    std::string config, output, restart;
    bool overwrite = false, quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {"ldp",
          "large deviations and concentration of the stationary particle system over replicas",
          {value("config", &options->config, "TOML configuration file", true),
           flag("--overwrite", &options->overwrite, "replace results in an existing output folder"),
           value("--output", &options->output, "output folder (overrides output.directory)"),
           flag("--quiet", &options->quiet, "no progress output"),
           value("--restart", &options->restart,
                 "continue from the replicas.checkpoint a stopped study wrote")},
          [options] {
            // Bad input stops before MPI starts.
            LdpConfig config = load_ldp_config(options->config);
            if (!options->output.empty()) config.model.output.directory = options->output;
            const MpiEnvironment mpi;
            run_ldp_study(mpi, config, options->overwrite, !options->quiet, options->restart);
          }};
}

}  // namespace cpm::app
