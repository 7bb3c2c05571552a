// `cpm features CONFIG.toml`: random-feature frequencies from i.i.d., orthogonal, randomised
// quasi-Monte Carlo and compensated repulsive (coulomb) generators, compared on the Gaussian
// kernel's Gram matrix.
#include "apps/commands.hpp"

namespace cpm::app {

Command features_command() {
  return result_command("features",
                        "compare generators of random-feature frequencies on the Gaussian kernel",
                        "continue from the replicas.checkpoint a stopped study wrote");
}

}  // namespace cpm::app
