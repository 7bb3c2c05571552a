#pragma once
// Each `cpm` sub-command lives in its own apps/command_<name>.cpp and registers itself here.
// A command's callback throws InputError for bad input; main turns that into exit code 2.
#include <CLI/CLI.hpp>

namespace cpm::app {

void add_run_command(CLI::App& app);
void add_kernel_command(CLI::App& app);
void add_ldp_command(CLI::App& app);
void add_converge_command(CLI::App& app);
void add_train_commands(CLI::App& app);

}  // namespace cpm::app
