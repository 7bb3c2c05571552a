// `cpm train CONFIG.toml`: the kernel-attention Transformer classifier (Phase A, then Phase B), one
// run, a comparison experiment or the paired protocol.
#include "apps/commands.hpp"

namespace cpm::app {

Command train_command() {
  return result_command("train", "train a Transformer classifier (Phase A + Phase B)",
                        "continue from the training_checkpoint.h5 a stopped training wrote (an "
                        "experiment: its replicas.checkpoint)");
}

}  // namespace cpm::app
