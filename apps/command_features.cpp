// `cpm features CONFIG.toml`: random-feature frequencies from i.i.d., orthogonal, randomised
// quasi-Monte Carlo and compensated repulsive (coulomb) generators, compared on the Gaussian
// kernel's Gram matrix.
#include <memory>

#include "apps/commands.hpp"
#include "config/features_config.hpp"
#include "experiments/features/feature_study.hpp"

namespace cpm::app {

Command features_command() {
  auto flags = std::make_shared<ResultFlags>();
  return {"features", "compare generators of random-feature frequencies on the Gaussian kernel",
          result_arguments(*flags, "continue from the replicas.checkpoint a stopped study wrote"),
          [flags] {
            FeaturesStudyConfig config = load_features_config(flags->config);
            if (!flags->output.empty()) config.output_directory = flags->output;
            run_feature_study(config, flags->resolved());
          }};
}

}  // namespace cpm::app
