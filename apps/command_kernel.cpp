// `cpm kernel CONFIG.toml`: learn random features as Coulomb particles and compare them with
// fixed and importance-sampled features on a classification task.
#include "apps/commands.hpp"

namespace cpm::app {

Command kernel_command() {
  return result_command("kernel",
                        "learn random features by Langevin dynamics on alignment + Riesz repulsion",
                        "continue from the replicas.checkpoint a stopped study wrote");
}

}  // namespace cpm::app
