// `cpm kernel CONFIG.toml`: learn random features as Coulomb particles and compare them with
// fixed and importance-sampled features on a classification task.
#include <memory>

#include "apps/commands.hpp"
#include "config/kernel_config.hpp"
#include "experiments/kernel/kernel_study.hpp"

namespace cpm::app {

Command kernel_command() {
  auto flags = std::make_shared<ResultFlags>();
  return {"kernel", "learn random features by Langevin dynamics on alignment + Riesz repulsion",
          result_arguments(*flags, "continue from the replicas.checkpoint a stopped study wrote"),
          [flags] {
            KernelConfig config = load_kernel_config(flags->config);
            if (!flags->output.empty()) config.output_directory = flags->output;
            run_kernel_study(config, flags->resolved());
          }};
}

}  // namespace cpm::app
