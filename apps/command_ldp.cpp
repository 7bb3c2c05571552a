// `cpm ldp CONFIG.toml`: tail probabilities and large-deviation rates over many replicas;
// `mpirun -np K cpm ldp CONFIG.toml` spreads the replicas over K ranks.
#include <memory>

#include "apps/commands.hpp"
#include "experiments/studies/ldp_study.hpp"

namespace cpm::app {

void add_ldp_command(CLI::App& app) {
  struct Options {
    std::string config;
    bool overwrite = false, quiet = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* ldp = app.add_subcommand(
      "ldp", "large deviations and concentration of the stationary particle system over replicas");
  ldp->add_option("config", options->config, "TOML configuration file")->required();
  ldp->add_flag("--overwrite", options->overwrite, "replace results in an existing output folder");
  ldp->add_flag("--quiet", options->quiet, "no progress output");
  ldp->callback([options] {
    const LdpConfig config = load_ldp_config(options->config);  // bad input stops before MPI starts
    const MpiEnvironment mpi;
    run_ldp_study(mpi, config, options->overwrite, !options->quiet);
  });
}

}  // namespace cpm::app
