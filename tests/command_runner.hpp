#pragma once
// Runs the `cpm` binary (CPM_BINARY, set by CMake for every test executable) in a shell and
// captures its exit code and standard error, for tests of the command line.
#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cpm::testing {

struct CommandResult {
  int exit_code;
  std::string standard_error;
};

// Runs `launcher` + the binary + `arguments` in a shell.
inline CommandResult run_cpm_with(const std::string& launcher, const std::string& arguments) {
  const std::filesystem::path err = std::filesystem::temp_directory_path() /
                                    ("cpm_stderr_" + std::to_string(::getpid()) + ".txt");
  const std::string command =
      launcher + CPM_BINARY + " " + arguments + " >/dev/null 2>" + err.string();
  const int status = std::system(command.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

// `arguments` is appended to the binary path verbatim (quote paths yourself).
inline CommandResult run_cpm(const std::string& arguments) {
  return run_cpm_with("", arguments);
}

// A fresh, empty temporary directory named after the test.
inline std::filesystem::path fresh_directory(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cpm_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// What a shell command prints on standard output.
inline std::string read_command_output(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
  }
  return out;
}

// The whole content of a file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `cpm <arguments>` under `mpirun -np <ranks>` with a clean environment (a parent process
// that initialised MPI would otherwise confuse mpirun) but the sanitizers' options (`make
// sanitize`), one OpenMP thread per rank (ranks oversubscribing the cores with threads of their
// own would crawl); mpirun's exit code and the ranks' standard error.
inline CommandResult run_cpm_mpi(int ranks, const std::string& arguments) {
  return run_cpm_with(
      "env -i PATH=/usr/bin:/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMP_NUM_THREADS=1 "
      "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}\" UBSAN_OPTIONS=\"${UBSAN_OPTIONS:-}\" mpirun "
      "--oversubscribe -np " +
          std::to_string(ranks) + " ",
      arguments);
}

}  // namespace cpm::testing
