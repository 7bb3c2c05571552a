// `cpm kernel CONFIG.toml`: learn random features as Coulomb particles and compare them with
// fixed and importance-sampled features on a classification task.
#include <memory>

#include "apps/commands.hpp"
#include "experiments/kernel/kernel_study.hpp"
#include "config/kernel_config.hpp"

namespace cpm::app {

void add_kernel_command(CLI::App& app) {
  struct Options {
    std::string config;
    std::string output;
    KernelStudyOptions study;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* kernel = app.add_subcommand(
      "kernel", "learn random features by Langevin dynamics on alignment + Riesz repulsion");
  kernel->add_option("config", options->config, "TOML configuration file")->required();
  kernel->add_flag("--overwrite", options->study.overwrite,
                   "replace results in an existing output folder");
  kernel->add_option("--output", options->output, "output folder (overrides output.directory)");
  kernel->add_flag("--quiet", options->quiet, "no progress output");
  kernel->callback([options] {
    KernelConfig config = load_kernel_config(options->config);
    if (!options->output.empty()) config.output_directory = options->output;
    options->study.progress = !options->quiet;
    run_kernel_study(config, options->study);
  });
}

}  // namespace cpm::app
