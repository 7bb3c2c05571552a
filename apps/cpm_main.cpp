// The `cpm` command line. Exit codes: 0 success, 1 failure during a run, 2 bad input.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <new>
#include <string>

#include "apps/commands.hpp"
#include "core/stop_request.hpp"
#include "io/build_info.hpp"
#include "io/input_error.hpp"
#include "parallel/rank_group.hpp"

namespace {

// A sub-command of the parser from its description (apps/commands.hpp).
void add_command(CLI::App& app, cpm::app::Command command) {
  CLI::App* sub = app.add_subcommand(command.name, command.description);
  for (const cpm::app::CommandArgument& a : command.arguments) {
    switch (a.kind) {
      case cpm::app::CommandArgument::Kind::value: {
        CLI::Option* option = sub->add_option(a.name, *a.value, a.help);
        if (a.required) option->required();
        break;
      }
      case cpm::app::CommandArgument::Kind::values:
        sub->add_option(a.name, *a.values, a.help);
        break;
      case cpm::app::CommandArgument::Kind::flag:
        sub->add_flag(a.name, *a.flag, a.help);
        break;
    }
  }
  sub->callback(std::move(command.run));
}

// The sub-commands' names, "run, kernel, …".
std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + command->get_name();
  return names;
}

// The first argument that is not an option names the sub-command (cpm's own options are flags).
// An unknown name is reported as such, not as a missing sub-command.
const char* unknown_command(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
      if (command->check_name(argv[i])) return nullptr;
    return argv[i];
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f, quotas) a write fails with EFBIG, reported like a full disk,
  // instead of the default SIGXFSZ killing the process mid-frame.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"cpm: Coulomb particle model — mean-field particle dynamics"};
  app.require_subcommand(1);
  app.set_version_flag("--version", cpm::version_text(),
                       "print the version, the build and the "
                       "library versions, and exit");
  add_command(app, cpm::app::run_command());
  add_command(app, cpm::app::kernel_command());
  add_command(app, cpm::app::features_command());
  add_command(app, cpm::app::ldp_command());
  add_command(app, cpm::app::converge_command());
  add_command(app, cpm::app::train_command());
  add_command(app, cpm::app::recall_command());
  add_command(app, cpm::app::concentration_command());
  add_command(app, cpm::app::eval_command());
  add_command(app, cpm::app::predict_command());
  if (const char* name = unknown_command(app, argc, argv)) {
    std::cerr << "cpm: unknown command '" << name << "' (commands: " << command_names(app)
              << "; cpm --help describes them)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "cpm: " << e.what() << '\n';
    return 2;
  } catch (const cpm::AgreedFailure& e) {  // one system over MPI ranks: the first rank reported
    return e.exit_code();
  } catch (const cpm::StopRequested& e) {
    std::cerr << "cpm: " << e.what() << '\n';
    return e.exit_code();
  } catch (const cpm::InputError& e) {
    std::cerr << "cpm: " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "cpm: error: out of memory (reduce particles.n or the grid)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cpm: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
