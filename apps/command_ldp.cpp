// `cpm ldp CONFIG.toml`: tail probabilities and large-deviation rates over many replicas, of a
// statistic of the particle system or (a configuration with a [features] table) of the
// random-feature kernel's error; `mpirun -np K cpm ldp CONFIG.toml` spreads the replicas over K
// ranks.
#include <memory>

#include "apps/commands.hpp"
#include "config/features_config.hpp"
#include "experiments/features/kernel_concentration.hpp"
#include "experiments/studies/ldp_study.hpp"
#include "io/text_file.hpp"

namespace cpm::app {

Command ldp_command() {
  struct Options {
    std::string config, output;
    CommandOptions study;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {
      "ldp",
      "large deviations and concentration of the particle system or of the random-feature kernel",
      {value("config", &options->config, "TOML configuration file", true),
       flag("--overwrite", &options->study.overwrite,
            "replace results in an existing output folder"),
       value("--output", &options->output, "output folder (overrides output.directory)"),
       flag("--quiet", &options->quiet, "no progress output"),
       value("--restart", &options->study.restart,
             "continue from the replicas.checkpoint a stopped study wrote")},
      [options] {
        options->study.progress = !options->quiet;
        // Bad input stops before MPI starts.
        const std::string text = read_text_file(options->config);
        if (is_kernel_concentration_config(text, options->config)) {
          KernelConcentrationConfig config =
              parse_kernel_concentration_config(text, options->config);
          if (!options->output.empty()) config.features.output_directory = options->output;
          const MpiEnvironment mpi;
          run_kernel_concentration(mpi, config, options->study);
          return;
        }
        LdpConfig config = parse_ldp_config(text, options->config);
        if (!options->output.empty()) config.model.output.directory = options->output;
        const MpiEnvironment mpi;
        run_ldp_study(mpi, config, options->study);
      }};
}

}  // namespace cpm::app
