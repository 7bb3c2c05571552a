#pragma once
// The commands that write results, each a configuration reader and the study it runs: the one
// definition the command line (apps/command_<name>.cpp) and the Python module (python/commands.cpp)
// share, so that both give the same results for the same configuration.
//
// A command is prepared from its TOML text first (bad input stops there, before MPI starts and
// before anything is written), then run. `--output DIR` is [output] directory in that text
// (config/output_override.hpp).
#include <functional>
#include <string>
#include <vector>

#include "experiments/command_options.hpp"
#include "parallel/launch_environment.hpp"
#include "parallel/rank_group.hpp"

namespace cpm {

// What a command takes from the process it runs in: MPI for the studies that spread their
// replicas over ranks (asked for only by those, when they start), and the ranks that hold one
// system between them (`run` under mpirun).
struct CommandEnvironment {
  std::function<const MpiEnvironment&()> mpi;
  RankGroup ranks;
};

struct PreparedCommand {
  std::string directory;    // the folder it writes
  bool over_ranks = false;  // whether it asks CommandEnvironment::mpi when it starts
  std::function<void(const CommandOptions&, const CommandEnvironment&)> run;
};

// run, converge, ldp, concentration, kernel, features, train, recall.
const std::vector<std::string>& result_command_names();

// The configuration of `command` read from `toml_text` (`source` names it in messages);
// InputError for an unknown command or bad input.
PreparedCommand prepare_command(const std::string& command, const std::string& toml_text,
                                const std::string& source);

}  // namespace cpm
