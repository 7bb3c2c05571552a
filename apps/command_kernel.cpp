// `cpm kernel CONFIG.toml`: learn random features as Coulomb particles and compare them with
// fixed and importance-sampled features on a classification task.
#include <memory>

#include "apps/commands.hpp"
#include "config/kernel_config.hpp"
#include "experiments/kernel/kernel_study.hpp"

namespace cpm::app {

Command kernel_command() {
  struct Options {
    std::string config;
    std::string output;
    CommandOptions study;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {"kernel",
          "learn random features by Langevin dynamics on alignment + Riesz repulsion",
          {value("config", &options->config, "TOML configuration file", true),
           flag("--overwrite", &options->study.overwrite,
                "replace results in an existing output folder"),
           value("--output", &options->output, "output folder (overrides output.directory)"),
           flag("--quiet", &options->quiet, "no progress output")},
          [options] {
            KernelConfig config = load_kernel_config(options->config);
            if (!options->output.empty()) config.output_directory = options->output;
            options->study.progress = !options->quiet;
            run_kernel_study(config, options->study);
          }};
}

}  // namespace cpm::app
