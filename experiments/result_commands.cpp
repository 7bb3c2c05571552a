#include "experiments/result_commands.hpp"

#include <memory>
#include <utility>

#include "config/features_config.hpp"
#include "config/kernel_config.hpp"
#include "config/recall_config.hpp"
#include "config/run_config.hpp"
#include "config/study_config.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/frequencies/feature_study.hpp"
#include "experiments/frequencies/kernel_concentration.hpp"
#include "experiments/kernel/kernel_study.hpp"
#include "experiments/recall/recall_study.hpp"
#include "experiments/run/particle_run.hpp"
#include "experiments/run/side_by_side.hpp"
#include "experiments/studies/convergence_study.hpp"
#include "experiments/studies/ldp_study.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

using Prepare = std::function<PreparedCommand(const std::string& text, const std::string& source)>;

// A command whose study needs nothing from the process.
template <class Config, class Study>
PreparedCommand plain(Config config, std::string directory, Study study) {
  auto c = std::make_shared<const Config>(std::move(config));
  return {std::move(directory), false,
          [c, study](const CommandOptions& o, const CommandEnvironment&) { study(*c, o); }};
}

// A command whose study spreads its replicas over the MPI ranks.
template <class Config, class Study>
PreparedCommand over_ranks(Config config, std::string directory, Study study) {
  auto c = std::make_shared<const Config>(std::move(config));
  return {
      std::move(directory), true,
      [c, study](const CommandOptions& o, const CommandEnvironment& e) { study(e.mpi(), *c, o); }};
}

// Every command, in the order of result_command_names().
const std::vector<std::pair<std::string, Prepare>>& table() {
  static const std::vector<std::pair<std::string, Prepare>> commands = {
      {"run",
       [](const std::string& text, const std::string& source) {
         auto c = std::make_shared<const RunConfig>(parse_run_config(text, source));
         return PreparedCommand{c->output.directory, false,
                                [c](const CommandOptions& o, const CommandEnvironment& e) {
                                  if (c->grid)
                                    run_side_by_side(*c, o, e.ranks);
                                  else
                                    run_particles(*c, o, e.ranks);
                                }};
       }},
      {"converge",
       [](const std::string& text, const std::string& source) {
         ConvergenceConfig c = parse_convergence_config(text, source);
         const std::string directory = c.model.output.directory;
         return over_ranks(std::move(c), directory, run_convergence_study);
       }},
      {"ldp",
       [](const std::string& text, const std::string& source) {
         LdpConfig c = parse_ldp_config(text, source);
         const std::string directory = c.model.output.directory;
         return over_ranks(std::move(c), directory, run_ldp_study);
       }},
      {"concentration",
       [](const std::string& text, const std::string& source) {
         KernelConcentrationConfig c = parse_kernel_concentration_config(text, source);
         const std::string directory = c.features.output_directory;
         return over_ranks(std::move(c), directory, run_kernel_concentration);
       }},
      {"kernel",
       [](const std::string& text, const std::string& source) {
         KernelConfig c = parse_kernel_config(text, source);
         const std::string directory = c.output_directory;
         return plain(std::move(c), directory, run_kernel_study);
       }},
      {"features",
       [](const std::string& text, const std::string& source) {
         FeaturesStudyConfig c = parse_features_config(text, source);
         const std::string directory = c.output_directory;
         return plain(std::move(c), directory, run_feature_study);
       }},
      {"train",
       [](const std::string& text, const std::string& source) {
         TrainConfig c = parse_train_config(text, source);
         const std::string directory = c.output_directory;
         return plain(std::move(c), directory, run_train_command);
       }},
      {"recall",
       [](const std::string& text, const std::string& source) {
         RecallConfig c = parse_recall_config(text, source);
         const std::string directory = c.output_directory;
         return plain(std::move(c), directory, run_recall_study);
       }},
  };
  return commands;
}

}  // namespace

const std::vector<std::string>& result_command_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& command : table()) n.push_back(command.first);
    return n;
  }();
  return names;
}

PreparedCommand prepare_command(const std::string& command, const std::string& toml_text,
                                const std::string& source) {
  for (const auto& [name, prepare] : table())
    if (name == command) return prepare(toml_text, source);
  std::string list;
  for (const auto& name : result_command_names()) list += (list.empty() ? "" : ", ") + name;
  throw InputError("command: unknown command '" + command + "' (" + list + ")");
}

}  // namespace cpm
