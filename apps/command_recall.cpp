// `cpm recall CONFIG.toml`: the recall study, associative retrieval or MQAR, every feature map at
// every size, each with its validated bandwidth.
#include "apps/commands.hpp"

namespace cpm::app {

Command recall_command() {
  return result_command("recall", "recall study: associative retrieval or MQAR over feature maps",
                        "continue from the folder of a stopped recall study");
}

}  // namespace cpm::app
