// `cpm converge CONFIG.toml`: particles against the PDE as N grows, replicas per N;
// `mpirun -np K cpm converge CONFIG.toml` spreads the replicas over K ranks.
#include "apps/commands.hpp"

namespace cpm::app {

Command converge_command() {
  return result_command("converge",
                        "convergence of the particle system to the McKean-Vlasov PDE as N grows",
                        "continue from the replicas.checkpoint a stopped study wrote");
}

}  // namespace cpm::app
