// A clean stop: SIGTERM during `cpm run` finishes the output interval it is in, keeps every
// frame, prints one line saying how to continue and exits with 128 + 15; the restart from that
// run.h5 ends bit for bit where an uninterrupted run ends. A second signal stops at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

extern char** environ;

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string config(const std::filesystem::path& out, int n = 400, int outputs = 400) {
  return "[particles]\nn = " + std::to_string(n) +
         "\nseed = 2\n[domain]\nkind = \"ball\"\ncentre = [0.0, 0.0]\n"
         "radius = 2.0\n[interaction]\nkernel = \"log\"\n[initial]\nlaw = \"gaussian\"\n"
         "std = 0.5\n[dynamics]\nbeta = 50.0\nstep = 1e-3\nt_end = 4.0\noutputs = " +
         std::to_string(outputs) + "\n[output]\ndirectory = \"" + out.string() + "\"\n";
}

// Starts `cpm run <toml>` (with --quiet unless `progress`) with standard error into `err`;
// returns its pid.
pid_t start_run(const std::filesystem::path& toml, const std::filesystem::path& err,
                bool progress = false) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string binary = CPM_BINARY, path = toml.string();
  char* argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("run"),
                  const_cast<char*>(path.c_str()),
                  const_cast<char*>(progress ? "--overwrite" : "--quiet"), nullptr};
  pid_t pid = -1;
  posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits until `file` exists (the run has started its loop), at most 20 s.
bool wait_for(const std::filesystem::path& file) {
  for (int i = 0; i < 2000 && !std::filesystem::exists(file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return std::filesystem::exists(file);
}

// Waits until `file` holds `text`, at most 20 s.
bool wait_for_text(const std::filesystem::path& file, const std::string& text) {
  for (int i = 0; i < 2000 && read_file(file).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return read_file(file).find(text) != std::string::npos;
}

TEST(StopSignal, SigtermStopsCleanlyAndTheRunContinuesBitForBit) {
  const auto dir = fresh_directory("stop_sigterm");
  write_file(dir / "stopped.toml", config(dir / "stopped"));
  const pid_t pid = start_run(dir / "stopped.toml", dir / "err.txt");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for(dir / "stopped" / "run_info.txt"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string err = read_file(dir / "err.txt");
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("stopped by SIGTERM; run.h5 holds every frame up to t = "), std::string::npos)
      << err;
  EXPECT_NE(err.find("--restart " + (dir / "stopped").string() + "/run.h5"), std::string::npos)
      << err;
  const H5mdRun stopped = read_h5md((dir / "stopped" / "run.h5").string());
  ASSERT_FALSE(stopped.positions.empty());
  EXPECT_LT(stopped.position_clock.time.back(), 4.0);

  write_file(dir / "whole.toml", config(dir / "whole"));
  ASSERT_EQ(run_cpm("run " + (dir / "whole.toml").string() + " --quiet").exit_code, 0);
  const auto continued =
      run_cpm("run " + (dir / "stopped.toml").string() + " --quiet --restart " +
              (dir / "stopped" / "run.h5").string() + " --output " + (dir / "continued").string());
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  const H5mdRun whole = read_h5md((dir / "whole" / "run.h5").string());
  const H5mdRun rest = read_h5md((dir / "continued" / "run.h5").string());
  EXPECT_EQ(whole.position_clock.step.back(), rest.position_clock.step.back());
  EXPECT_TRUE(whole.positions.back() == rest.positions.back());
}

TEST(StopSignal, ASecondSignalStopsAtOnce) {
  // One output interval of 4,000 steps (seconds): the first signal would wait for its end.
  const auto dir = fresh_directory("stop_twice");
  write_file(dir / "run.toml", config(dir / "out", 2000, 1));
  const pid_t pid = start_run(dir / "run.toml", dir / "err.txt", true);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_for_text(dir / "err.txt", "t=0 "));  // past the frame at t = 0
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << read_file(dir / "err.txt");
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

}  // namespace
}  // namespace cpm
