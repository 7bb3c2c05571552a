// `cpm concentration CONFIG.toml`: concentration of the random-feature kernel's error over many
// replicas of a frequency set; `mpirun -np K cpm concentration CONFIG.toml` spreads the replicas
// over K ranks.
#include "apps/commands.hpp"

namespace cpm::app {

Command concentration_command() {
  return result_command("concentration",
                        "tail probabilities of the random-feature kernel's error over replicas",
                        "continue from the replicas.checkpoint a stopped study wrote");
}

}  // namespace cpm::app
