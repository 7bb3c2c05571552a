// The `cpm` command line. Exit codes: 0 success, 1 failure during a run, 2 bad input.
#include <iostream>

#include "apps/commands.hpp"
#include "io/input_error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cpm: Coulomb particle model — mean-field particle dynamics"};
  app.require_subcommand(1);
  cpm::app::add_run_command(app);
  cpm::app::add_kernel_command(app);
  cpm::app::add_ldp_command(app);
  cpm::app::add_converge_command(app);
  cpm::app::add_train_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "cpm: " << e.what() << '\n';
    return 2;
  } catch (const cpm::InputError& e) {
    std::cerr << "cpm: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cpm: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
