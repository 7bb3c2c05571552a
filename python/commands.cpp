// The commands that write results on a TOML text, prepared and run by the same definitions as the
// command line's (experiments/result_commands.hpp): the results are those of the command line for
// the same configuration, bit for bit.
#include "config/output_override.hpp"
#include "experiments/result_commands.hpp"
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

}  // namespace

void bind_commands(py::module_& m) {
  m.def(
      "check_config",
      [](const std::string& command, const std::string& text, const std::string& source) {
        return prepare_command(command, text, source).directory;
      },
      py::arg("command"), py::arg("text"), py::arg("source") = "<python>",
      "Parses a command's TOML configuration as the command would, writing nothing; returns\n"
      "its output folder, or raises ValueError with the command line's one-line message.");

  m.def(
      "run_command",
      [](const std::string& command, const std::string& text, const std::string& source,
         const std::string& output, bool overwrite, bool progress, const std::string& restart) {
        const PreparedCommand p =
            prepare_command(command, with_output_directory(text, source, output), source);
        CommandOptions options;
        options.overwrite = overwrite;
        options.progress = progress;
        options.restart = restart;
        // MPI starts here, with the GIL held, for the studies that spread replicas over ranks.
        if (p.over_ranks) module_mpi();
        const CommandEnvironment environment{module_mpi, {}};
        without_gil([&] { p.run(options, environment); });
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
