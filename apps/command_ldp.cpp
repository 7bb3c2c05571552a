// `cpm ldp CONFIG.toml`: tail probabilities and large-deviation rates of a statistic of the
// particle system over many replicas; `mpirun -np K cpm ldp CONFIG.toml` spreads the replicas over
// K ranks.
#include "apps/commands.hpp"

namespace cpm::app {

Command ldp_command() {
  return result_command("ldp", "large deviations of a statistic of the particle system",
                        "continue from the replicas.checkpoint a stopped study wrote");
}

}  // namespace cpm::app
