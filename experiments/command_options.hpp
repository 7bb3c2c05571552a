#pragma once
// What every command that writes results takes from its command line (apps/): whether an
// existing results folder may be replaced, whether progress lines are printed, and what a stopped
// command continues from.
#include <string>

namespace cpm {

struct CommandOptions {
  bool overwrite = false;
  bool progress = true;
  // Empty: a new start. Otherwise a run.h5 (`cpm run`), a replicas.checkpoint (`cpm converge`,
  // `cpm ldp`, `cpm concentration`, `cpm features`, `cpm kernel`, an experiment of `cpm train`),
  // a training_checkpoint.h5 (`cpm train`, one run) or a stopped study's folder (`cpm recall`).
  std::string restart;
};

}  // namespace cpm
