#pragma once
// Starts the `cpm` binary (CPM_BINARY) in the background and stops it with a signal, for the
// tests of the clean stop (core/stop_request.hpp): what a batch scheduler does before its limit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/command_runner.hpp"

extern char** environ;

namespace cpm::testing {

// Starts `cpm <command> <toml>` (with --quiet unless `progress`, then with --overwrite) with
// standard error into `err`; returns its pid.
inline pid_t start_cpm(const std::string& command, const std::filesystem::path& toml,
                       const std::filesystem::path& err, bool progress) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string binary = CPM_BINARY, path = toml.string();
  char* argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>(command.c_str()),
                  const_cast<char*>(path.c_str()),
                  const_cast<char*>(progress ? "--overwrite" : "--quiet"), nullptr};
  pid_t pid = -1;
  posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits until `file` exists (a run has started its loop), at most 20 s.
inline bool wait_for(const std::filesystem::path& file) {
  for (int i = 0; i < 2000 && !std::filesystem::exists(file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return std::filesystem::exists(file);
}

// Waits until `file` holds `text`, at most 60 s.
inline bool wait_for_text(const std::filesystem::path& file, const std::string& text) {
  for (int i = 0; i < 6000 && read_file(file).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return read_file(file).find(text) != std::string::npos;
}

// Runs `cpm <command> <toml>` with progress lines, sends SIGTERM once `label` appears on its
// standard error and returns that standard error ("" after a failed expectation: the command did
// not start, never printed `label`, or did not exit with 128 + SIGTERM).
inline std::string stopped_by_sigterm(const std::string& command, const std::filesystem::path& toml,
                                      const std::string& label) {
  const auto err = toml.parent_path() / (command + "_err.txt");
  const pid_t pid = start_cpm(command, toml, err, true);
  EXPECT_GT(pid, 0);
  if (pid <= 0) return "";
  EXPECT_TRUE(wait_for_text(err, label));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string text = read_file(err);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << text;
  return WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM ? text : "";
}

// The last line of a stopped command's standard error: "cpm: stopped by SIGTERM; ...".
inline std::string stop_line(const std::string& standard_error) {
  const std::size_t at = standard_error.rfind("cpm: stopped by SIGTERM; ");
  return at == std::string::npos ? "" : standard_error.substr(at);
}

// A CSV table without the columns named `dropped` (wall times, which differ between two runs).
inline std::string table_without(const std::filesystem::path& file,
                                 const std::vector<std::string>& dropped) {
  std::istringstream in(read_file(file));
  std::string kept, line;
  std::vector<bool> drop;
  for (bool header = true; std::getline(in, line); header = false) {
    std::istringstream cells(line);
    std::string cell;
    for (std::size_t column = 0; std::getline(cells, cell, ','); ++column) {
      if (header) drop.push_back(std::find(dropped.begin(), dropped.end(), cell) != dropped.end());
      if (column >= drop.size() || !drop[column]) kept += cell + ",";
    }
    kept += "\n";
  }
  return kept;
}

}  // namespace cpm::testing
