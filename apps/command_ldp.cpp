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
  auto flags = std::make_shared<ResultFlags>();
  return {
      "ldp",
      "large deviations and concentration of the particle system or of the random-feature kernel",
      result_arguments(*flags, "continue from the replicas.checkpoint a stopped study wrote"),
      [flags] {
        // Bad input stops before MPI starts.
        const std::string text = read_text_file(flags->config);
        if (is_kernel_concentration_config(text, flags->config)) {
          KernelConcentrationConfig config = parse_kernel_concentration_config(text, flags->config);
          if (!flags->output.empty()) config.features.output_directory = flags->output;
          const MpiEnvironment mpi;
          run_kernel_concentration(mpi, config, flags->resolved());
          return;
        }
        LdpConfig config = parse_ldp_config(text, flags->config);
        if (!flags->output.empty()) config.model.output.directory = flags->output;
        const MpiEnvironment mpi;
        run_ldp_study(mpi, config, flags->resolved());
      }};
}

}  // namespace cpm::app
