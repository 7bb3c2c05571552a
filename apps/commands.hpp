#pragma once
// Each `cpm` sub-command lives in its own apps/command_<name>.cpp and describes itself as data: its
// name, its arguments bound to its own variables, and what it runs. apps/cpm_main.cpp turns the
// descriptions into the command line, so that it alone compiles the parser (CLI11, about 13 s of
// compile time in every file that includes it). A command throws InputError for bad input; main
// turns that into exit code 2.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/command_options.hpp"

namespace cpm::app {

struct CommandArgument {
  enum class Kind { value, values, flag };
  Kind kind = Kind::value;
  std::string name;  // "config" (positional) or "--output"
  std::string help;
  bool required = false;
  std::string* value = nullptr;                // Kind::value
  std::vector<std::string>* values = nullptr;  // Kind::values (the option may repeat)
  bool* flag = nullptr;                        // Kind::flag
};

struct Command {
  std::string name, description;
  std::vector<CommandArgument> arguments;
  std::function<void()> run;  // owns the variables the arguments point to
};

inline CommandArgument value(std::string name, std::string* target, std::string help,
                             bool required = false) {
  return {CommandArgument::Kind::value,
          std::move(name),
          std::move(help),
          required,
          target,
          nullptr,
          nullptr};
}
inline CommandArgument values(std::string name, std::vector<std::string>* target,
                              std::string help) {
  return {CommandArgument::Kind::values,
          std::move(name),
          std::move(help),
          false,
          nullptr,
          target,
          nullptr};
}
inline CommandArgument flag(std::string name, bool* target, std::string help) {
  return {CommandArgument::Kind::flag,
          std::move(name),
          std::move(help),
          false,
          nullptr,
          nullptr,
          target};
}

// What every command that writes results reads from its command line: its configuration file,
// the folder that replaces the configuration's output directory, and the options for the study.
struct ResultFlags {
  std::string config, output;
  CommandOptions options;
  bool quiet = false;
  // `options` with progress lines off under --quiet.
  CommandOptions resolved() const {
    CommandOptions o = options;
    o.progress = !quiet;
    return o;
  }
};

// The same arguments, with the same help, for every command that writes results: the
// configuration file (required unless `config_required` is false), --overwrite, --output,
// --quiet and, when `restart_help` says what it continues from, --restart.
inline std::vector<CommandArgument> result_arguments(ResultFlags& flags,
                                                     const std::string& restart_help = "",
                                                     bool config_required = true) {
  std::vector<CommandArgument> arguments = {
      value("config", &flags.config, "TOML configuration file", config_required),
      flag("--overwrite", &flags.options.overwrite, "replace results in an existing output folder"),
      value("--output", &flags.output, "output folder (overrides output.directory)"),
      flag("--quiet", &flags.quiet, "no progress output")};
  if (!restart_help.empty())
    arguments.push_back(value("--restart", &flags.options.restart, restart_help));
  return arguments;
}

Command run_command();
Command kernel_command();
Command features_command();
Command ldp_command();
Command converge_command();
Command train_command();
Command eval_command();
Command predict_command();

}  // namespace cpm::app
