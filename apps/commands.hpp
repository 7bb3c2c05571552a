#pragma once
// Each `cpm` sub-command lives in its own apps/command_<name>.cpp and describes itself as data: its
// name, its arguments bound to its own variables, and what it runs. apps/cpm_main.cpp turns the
// descriptions into the command line, so that it alone compiles the parser (CLI11, about 13 s of
// compile time in every file that includes it). A command throws InputError for bad input; main
// turns that into exit code 2.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/output_override.hpp"
#include "experiments/command_options.hpp"
#include "experiments/result_commands.hpp"
#include "io/text_file.hpp"

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
  // The configuration file's text (`fallback`, named `fallback_source`, without a file), with
  // --output written into it as [output] directory.
  std::string config_text(const std::string& fallback = "",
                          const std::string& fallback_source = "") const {
    if (config.empty()) return with_output_directory(fallback, fallback_source, output);
    return with_output_directory(read_text_file(config), config, output);
  }
  // `options` with progress lines off under --quiet.
  CommandOptions resolved() const {
    CommandOptions o = options;
    o.progress = !quiet;
    return o;
  }
};

// --output and --quiet, with the same help for every command that takes them.
inline CommandArgument output_argument(ResultFlags& flags) {
  return value("--output", &flags.output, "output folder (overrides output.directory)");
}
inline CommandArgument quiet_argument(ResultFlags& flags) {
  return flag("--quiet", &flags.quiet, "no progress output");
}

// The same arguments, with the same help, for every command that writes results: the
// configuration file (required unless `config_required` is false), --overwrite, --output,
// --quiet and, when `restart_help` says what it continues from, --restart.
inline std::vector<CommandArgument> result_arguments(ResultFlags& flags,
                                                     const std::string& restart_help = "",
                                                     bool config_required = true) {
  std::vector<CommandArgument> arguments = {
      value("config", &flags.config, "TOML configuration file", config_required),
      flag("--overwrite", &flags.options.overwrite, "replace results in an existing output folder"),
      output_argument(flags), quiet_argument(flags)};
  if (!restart_help.empty())
    arguments.push_back(value("--restart", &flags.options.restart, restart_help));
  return arguments;
}

// Runs `command` (experiments/result_commands.hpp) on the configuration of `flags`: its text is
// read and checked first, MPI starts only when the study asks for it.
inline void run_result_command(const std::string& command, const ResultFlags& flags) {
  const PreparedCommand prepared = prepare_command(command, flags.config_text(), flags.config);
  std::unique_ptr<MpiEnvironment> mpi;
  const CommandEnvironment environment{[&mpi]() -> const MpiEnvironment& {
                                         if (!mpi) mpi = std::make_unique<MpiEnvironment>();
                                         return *mpi;
                                       },
                                       {}};
  prepared.run(flags.resolved(), environment);
}

// The command of a study that writes results: its name, its one-line description and what
// --restart continues from; it runs run_result_command(name, ...).
inline Command result_command(const std::string& name, const std::string& description,
                              const std::string& restart_help) {
  auto flags = std::make_shared<ResultFlags>();
  return {name, description, result_arguments(*flags, restart_help),
          [flags, name] { run_result_command(name, *flags); }};
}

Command run_command();
Command kernel_command();
Command features_command();
Command ldp_command();
Command converge_command();
Command train_command();
Command recall_command();
Command concentration_command();
Command eval_command();
Command predict_command();

}  // namespace cpm::app
