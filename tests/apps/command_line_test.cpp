// The command line on bad input and its provenance: every mistake below stops with exit code 2
// and one line naming what is wrong, before anything is written; `cpm --version` describes the
// build; every run writes its resolved configuration, which repeats the run bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

// `cpm <arguments>` with its standard output (standard error discarded) and exit code.
std::pair<int, std::string> run_cpm_output(const std::string& arguments) {
  std::string out;
  FILE* pipe = ::popen((std::string(CPM_BINARY) + " " + arguments + " 2>/dev/null").c_str(), "r");
  if (!pipe) return {-1, out};
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A 1D model with its grid; `extra` is appended (sections of its own).
std::string model(const std::string& n = "40", const std::string& t_end = "0.02",
                  const std::string& cells = "[64]") {
  return "[particles]\nn = " + n +
         "\n[domain]\nkind = \"ball\"\ncentre = [0.0]\nradius = 3.0\n"
         "[interaction]\nkernel = \"log\"\n[initial]\nstd = 0.5\n"
         "[dynamics]\nbeta = 20.0\nstep = 1e-3\nt_end = " +
         t_end + "\noutputs = 2\n[grid]\ncells = " + cells + "\n";
}

// Expects exit 2, one line on standard error holding every needle and none of `not_wanted`, and
// no output folder.
void expect_rejected(const std::string& name, const std::string& config,
                     const std::vector<std::string>& needles, const std::string& not_wanted = "") {
  const auto dir = fresh_directory("command_line_" + name);
  write_file(dir / "bad.toml",
             config + "[output]\ndirectory = \"" + (dir / "out").string() + "\"\n");
  const auto result = run_cpm("run " + (dir / "bad.toml").string());
  EXPECT_EQ(result.exit_code, 2) << name << ": " << result.standard_error;
  EXPECT_EQ(lines(result.standard_error), 1u) << name << ": " << result.standard_error;
  for (const std::string& needle : needles)
    EXPECT_NE(result.standard_error.find(needle), std::string::npos)
        << name << ": " << result.standard_error;
  if (!not_wanted.empty()) {
    EXPECT_EQ(result.standard_error.find(not_wanted), std::string::npos)
        << name << ": " << result.standard_error;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out")) << name;
  std::filesystem::remove_all(dir);
}

TEST(CommandLine, TooManyParticlesForThisMachineNameTheMemoryNeeded) {
  expect_rejected("huge_n", model("100000000000"),
                  {"particles.n: a run of 100000000000 particles needs at least", "TB of memory",
                   "this machine has"});
}

TEST(CommandLine, AnInfiniteEndTimeIsRefusedAtConfiguration) {
  expect_rejected("t_end_inf", model("40", "inf"), {"dynamics.t_end: must be positive and finite"});
  expect_rejected("t_end_nan", model("40", "nan"), {"dynamics.t_end"});
  std::string step_inf = model();
  step_inf.replace(step_inf.find("step = 1e-3"), 11, "step = inf");
  expect_rejected("step_inf", step_inf, {"dynamics.step: must be positive and finite"});
}

TEST(CommandLine, GridCellCountsGetTheRightReason) {
  expect_rejected(
      "cells_per_axis", model("40", "0.02", "[100000000]"),
      {"grid.cells: 100000000 cells along axis 0 exceed the limit of 16777216 per axis"},
      "whole numbers");
  expect_rejected("cells_fraction", model("40", "0.02", "[10.5]"),
                  {"grid.cells: must be whole numbers"});
  std::string two_d = model("40", "0.02", "[16000000, 16000000]");
  two_d.replace(two_d.find("centre = [0.0]"), 14, "centre = [0.0, 0.0]");
  expect_rejected("cells_memory", two_d,
                  {"grid.cells: a grid of 256000000000000 cells needs at least", "for the grid"});
}

TEST(CommandLine, ADirectoryAsConfigurationIsNamed) {
  const auto dir = fresh_directory("config_directory");
  const auto result = run_cpm("run " + dir.string());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(lines(result.standard_error), 1u) << result.standard_error;
  EXPECT_NE(result.standard_error.find(dir.string() + ": is a directory"), std::string::npos)
      << result.standard_error;
  std::filesystem::remove_all(dir);
}

TEST(CommandLine, AnUnknownCommandIsNamed) {
  const auto result = run_cpm("frobnicate");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(lines(result.standard_error), 1u) << result.standard_error;
  EXPECT_NE(result.standard_error.find("unknown command 'frobnicate'"), std::string::npos)
      << result.standard_error;
  EXPECT_NE(result.standard_error.find("run"), std::string::npos) << result.standard_error;
  // No command at all is still "a subcommand is required".
  EXPECT_EQ(run_cpm("").exit_code, 2);
}

TEST(CommandLine, VersionDescribesTheBuildAndItsLibraries) {
  const auto [code, out] = run_cpm_output("--version");
  EXPECT_EQ(code, 0);
  for (const char* needle : {"cpm " CPM_VERSION " (git ", "built with", "instruction set: ",
                             "Eigen 3.", "Boost 1.", "HDF5 1.", "VTK 9.", "FFTW 3.", "toml++ 3."})
    EXPECT_NE(out.find(needle), std::string::npos) << needle << " in:\n" << out;
}

// A config that leaves most keys to their defaults; its config.toml names every key, and
// running that file (into another folder) gives the same tables and frames to the bit.
TEST(CommandLine, ResolvedConfigurationRepeatsTheRunBitForBit) {
  const auto dir = fresh_directory("resolved_config");
  write_file(dir / "run.toml",
             "[particles]\nn = 30\n[domain]\nkind = \"ball\"\ncentre = [0.0]\nradius = 3.0\n"
             "[interaction]\nkernel = \"log\"\n[initial]\nstd = 0.7\n[dynamics]\nbeta = "
             "15.0\nt_end = 0.03\noutputs = 3\n"
             "[grid]\ncells = [50]\n[output]\ndirectory = \"" +
                 (dir / "first").string() + "\"\n");
  ASSERT_EQ(run_cpm("run " + (dir / "run.toml").string()).exit_code, 0);
  const std::string resolved = read_file(dir / "first" / "config.toml");
  for (const char* key :
       {"seed = 1", "kernel = \"log\"", "lambda = 1.0", "method = \"direct\"", "law = \"gaussian\"",
        "centre = [0.0]", "integrator = \"langevin\"", "step = 0.001", "cfl = 0.5",
        "scheme = \"second_order\"", "directions = 16", "[grid.initial]", "kind = \"law\""})
    EXPECT_NE(resolved.find(key), std::string::npos) << key << " in:\n" << resolved;
  const auto again = run_cpm("run " + (dir / "first" / "config.toml").string() + " --output " +
                             (dir / "second").string());
  ASSERT_EQ(again.exit_code, 0) << again.standard_error;

  EXPECT_EQ(read_file(dir / "first" / "side_by_side.csv"),
            read_file(dir / "second" / "side_by_side.csv"));
  const H5mdRun a = read_h5md((dir / "first" / "run.h5").string());
  const H5mdRun b = read_h5md((dir / "second" / "run.h5").string());
  ASSERT_EQ(a.positions.size(), b.positions.size());
  for (std::size_t f = 0; f < a.positions.size(); ++f)
    EXPECT_TRUE(a.positions[f] == b.positions[f]) << "frame " << f;
  EXPECT_TRUE(a.fields.at("density").second == b.fields.at("density").second);
  EXPECT_EQ(a.parameters, b.parameters);
  // The second run's resolved configuration is the first's but for its folder and source.
  std::string second = read_file(dir / "second" / "config.toml");
  EXPECT_NE(second.find("directory = \"" + (dir / "second").string() + "\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(CommandLine, RunsRecordTheBuildTheyCameFrom) {
  const auto dir = fresh_directory("provenance");
  write_file(dir / "run.toml",
             model() + "[output]\ndirectory = \"" + (dir / "out").string() + "\"\n");
  ASSERT_EQ(run_cpm("run " + (dir / "run.toml").string()).exit_code, 0);
  const std::string info = read_file(dir / "out" / "run_info.txt");
  for (const char* key :
       {"cpm_version = " CPM_VERSION, "git_describe = ", "instruction_set = ", "libraries = Eigen"})
    EXPECT_NE(info.find(key), std::string::npos) << key << " in:\n" << info;
  const H5mdRun run = read_h5md((dir / "out" / "run.h5").string());
  EXPECT_EQ(run.header.creator, "cpm");
  EXPECT_EQ(run.header.creator_version, CPM_VERSION);
  for (const char* name : {"git_describe", "compiler", "instruction_set", "libraries"})
    EXPECT_TRUE(run.header.creator_details.count(name)) << name;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
