// `cpm features CONFIG.toml`: random-feature frequencies from i.i.d., orthogonal, randomised
// quasi-Monte Carlo and compensated repulsive (coulomb) generators, compared on the Gaussian
// kernel's Gram matrix.
#include <memory>

#include "apps/commands.hpp"
#include "config/features_config.hpp"
#include "experiments/features/feature_study.hpp"

namespace cpm::app {

Command features_command() {
  struct Options {
    std::string config;
    std::string output;
    CommandOptions study;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {"features",
          "compare generators of random-feature frequencies on the Gaussian kernel",
          {value("config", &options->config, "TOML configuration file", true),
           flag("--overwrite", &options->study.overwrite,
                "replace results in an existing output folder"),
           value("--output", &options->output, "output folder (overrides output.directory)"),
           flag("--quiet", &options->quiet, "no progress output")},
          [options] {
            FeaturesStudyConfig config = load_features_config(options->config);
            if (!options->output.empty()) config.output_directory = options->output;
            options->study.progress = !options->quiet;
            run_feature_study(config, options->study);
          }};
}

}  // namespace cpm::app
