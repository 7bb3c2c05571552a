// The commands that write results (run, converge, ldp, kernel, features, train) on a TOML text,
// through the same configuration readers and study functions as apps/command_<name>.cpp: the
// results are those of the command line for the same configuration, bit for bit.
#include <functional>
#include <map>

#include "config/features_config.hpp"
#include "config/kernel_config.hpp"
#include "config/recall_config.hpp"
#include "config/run_config.hpp"
#include "config/study_config.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/features/feature_study.hpp"
#include "experiments/features/kernel_concentration.hpp"
#include "experiments/kernel/kernel_study.hpp"
#include "experiments/recall/recall_study.hpp"
#include "experiments/run/particle_run.hpp"
#include "experiments/run/side_by_side.hpp"
#include "experiments/studies/convergence_study.hpp"
#include "experiments/studies/ldp_study.hpp"
#include "io/input_error.hpp"
#include "parallel/launch_environment.hpp"
#include "python/bindings.hpp"

namespace cpm::python {

namespace {

// MPI for the studies, initialised before the first study starts (run_command, with the GIL
// held) and finalised when Python exits: it cannot be initialised twice in one process, as a
// command's own MpiEnvironment would.
const MpiEnvironment& module_mpi() {
  static MpiEnvironment* mpi = [] {
    auto* environment = new MpiEnvironment();
    py::module_::import("atexit").attr("register")(
        py::cpp_function([environment] { delete environment; }));
    return environment;
  }();
  return *mpi;
}

// A command: its configuration parsed (bad input stops here, before anything is written), with
// the output folder replaced when one is given; the work it then does; the folder it writes.
struct Prepared {
  std::string directory;
  std::function<void(const CommandOptions&)> run;
};
using Prepare = std::function<Prepared(const std::string& text, const std::string& source,
                                       const std::string& output)>;

const std::map<std::string, Prepare>& commands() {
  static const std::map<std::string, Prepare> table = {
      {"run",
       [](const std::string& text, const std::string& source, const std::string& output) {
         auto c = std::make_shared<RunConfig>(parse_run_config(text, source));
         if (!output.empty()) c->output.directory = output;
         return Prepared{c->output.directory, [c](const CommandOptions& o) {
                           if (c->grid)
                             run_side_by_side(*c, o);
                           else
                             run_particles(*c, o);
                         }};
       }},
      {"converge",
       [](const std::string& text, const std::string& source, const std::string& output) {
         auto c = std::make_shared<ConvergenceConfig>(parse_convergence_config(text, source));
         if (!output.empty()) c->model.output.directory = output;
         return Prepared{c->model.output.directory, [c](const CommandOptions& o) {
                           run_convergence_study(module_mpi(), *c, o);
                         }};
       }},
      {"ldp",
       [](const std::string& text, const std::string& source, const std::string& output) {
         if (is_kernel_concentration_config(text, source)) {
           auto c = std::make_shared<KernelConcentrationConfig>(
               parse_kernel_concentration_config(text, source));
           if (!output.empty()) c->features.output_directory = output;
           return Prepared{c->features.output_directory, [c](const CommandOptions& o) {
                             run_kernel_concentration(module_mpi(), *c, o);
                           }};
         }
         auto c = std::make_shared<LdpConfig>(parse_ldp_config(text, source));
         if (!output.empty()) c->model.output.directory = output;
         return Prepared{c->model.output.directory,
                         [c](const CommandOptions& o) { run_ldp_study(module_mpi(), *c, o); }};
       }},
      {"kernel",
       [](const std::string& text, const std::string& source, const std::string& output) {
         auto c = std::make_shared<KernelConfig>(parse_kernel_config(text, source));
         if (!output.empty()) c->output_directory = output;
         return Prepared{c->output_directory,
                         [c](const CommandOptions& o) { run_kernel_study(*c, o); }};
       }},
      {"features",
       [](const std::string& text, const std::string& source, const std::string& output) {
         auto c = std::make_shared<FeaturesStudyConfig>(parse_features_config(text, source));
         if (!output.empty()) c->output_directory = output;
         return Prepared{c->output_directory,
                         [c](const CommandOptions& o) { run_feature_study(*c, o); }};
       }},
      {"train",
       [](const std::string& text, const std::string& source, const std::string& output) {
         if (is_recall_config(text, source)) {
           auto c = std::make_shared<RecallConfig>(parse_recall_config(text, source));
           if (!output.empty()) c->output_directory = output;
           return Prepared{c->output_directory,
                           [c](const CommandOptions& o) { run_recall_study(*c, o); }};
         }
         auto c = std::make_shared<TrainConfig>(parse_train_config(text, source));
         if (!output.empty()) c->output_directory = output;
         return Prepared{c->output_directory,
                         [c](const CommandOptions& o) { run_train_command(*c, o); }};
       }},
  };
  return table;
}

Prepared prepare(const std::string& command, const std::string& text, const std::string& source,
                 const std::string& output) {
  const auto found = commands().find(command);
  if (found == commands().end())
    throw InputError("command: unknown command '" + command +
                     "' (run, converge, ldp, kernel, features, train)");
  return found->second(text, source, output);
}

}  // namespace

void bind_commands(py::module_& m) {
  m.def(
      "check_config",
      [](const std::string& command, const std::string& text, const std::string& source) {
        return prepare(command, text, source, "").directory;
      },
      py::arg("command"), py::arg("text"), py::arg("source") = "<python>",
      "Parses a command's TOML configuration as the command would, writing nothing; returns\n"
      "its output folder, or raises ValueError with the command line's one-line message.");

  m.def(
      "run_command",
      [](const std::string& command, const std::string& text, const std::string& source,
         const std::string& output, bool overwrite, bool progress, const std::string& restart) {
        const Prepared p = prepare(command, text, source, output);
        if (command == "converge" || command == "ldp") module_mpi();
        CommandOptions options;
        options.overwrite = overwrite;
        options.progress = progress;
        options.restart = restart;
        without_gil([&] { p.run(options); });
        return p.directory;
      },
      py::arg("command"), py::arg("text"), py::arg("source") = "<python>", py::arg("output") = "",
      py::arg("overwrite") = false, py::arg("progress") = false, py::arg("restart") = "",
      "Runs `cpm <command>` on a TOML text (source names it in messages and provenance) and\n"
      "returns the output folder. output, overwrite, progress and restart are the flags\n"
      "--output, --overwrite, not --quiet and --restart. Ctrl-C stops it as it stops the\n"
      "command (KeyboardInterrupt; a stopped run or study can be continued with restart).");
}

}  // namespace cpm::python
