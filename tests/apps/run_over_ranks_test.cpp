// `mpirun -np P cpm run`: one particle system spread over P ranks (docs/distributed.md §4) writes
// what one process writes, to rounding; a run written by 2 ranks continues on 3; what does not
// spread yet is refused with one line and exit code 2 before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::run_cpm_mpi;
using testing::write_file;

// N = 61 (shares of 31/30 and 21/20/20 particles), the distributed direct sum, Langevin noise.
std::string config(const std::filesystem::path& out, double t_end = 0.02, int outputs = 4) {
  return R"([particles]
n = 61
seed = 5
[domain]
kind = "ball"
centre = [0.0, 0.0]
radius = 2.0
[potential]
kind = "quadratic"
strength = 1.0
[interaction]
kernel = "riesz"
s = 0.5
lambda = 1.0
method = "direct"
[initial]
law = "gaussian"
std = 0.5
[dynamics]
beta = 50.0
step = 1e-3
t_end = )" +
         std::to_string(t_end) + "\noutputs = " + std::to_string(outputs) +
         "\n[output]\ndirectory = \"" + out.string() + "\"\n";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The numbers of a CSV table, row by row (the header skipped).
std::vector<std::vector<double>> table(const std::filesystem::path& csv) {
  std::istringstream lines(read_file(csv));
  std::string line;
  std::getline(lines, line);
  std::vector<std::vector<double>> rows;
  while (std::getline(lines, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

void expect_same_run(const std::filesystem::path& one, const std::filesystem::path& spread,
                     const std::string& what, const std::string& csv = "observables.csv") {
  const auto expected = table(one / csv), found = table(spread / csv);
  ASSERT_EQ(expected.size(), found.size()) << what;
  for (std::size_t r = 0; r < expected.size(); ++r) {
    ASSERT_EQ(expected[r].size(), found[r].size()) << what;
    for (std::size_t c = 0; c < expected[r].size(); ++c)
      EXPECT_NEAR(found[r][c], expected[r][c], 1e-10 * (1.0 + std::abs(expected[r][c])))
          << what << ": row " << r << " column " << c;
  }
  const Checkpoint a = read_checkpoint((one / "run.h5").string());
  const Checkpoint b = read_checkpoint((spread / "run.h5").string());
  EXPECT_EQ(a.state.time, b.state.time) << what;
  ASSERT_EQ(a.positions.rows(), b.positions.rows()) << what;
  EXPECT_LT((a.positions - b.positions).cwiseAbs().maxCoeff(), 1e-10) << what;
  ASSERT_EQ(a.density.size(), b.density.size()) << what;
  if (a.density.size() > 0) {
    EXPECT_LE((a.density - b.density).cwiseAbs().maxCoeff(),
              1e-12 * a.density.cwiseAbs().maxCoeff())
        << what;
  }
}

TEST(RunOverRanks, TwoThreeAndFourRanksFollowOneProcess) {
  const auto dir = fresh_directory("run_ranks");
  write_file(dir / "one.toml", config(dir / "one"));
  ASSERT_EQ(run_cpm("run --quiet " + (dir / "one.toml").string()).exit_code, 0);
  for (int ranks : {2, 3, 4}) {
    const auto out = dir / ("ranks" + std::to_string(ranks));
    write_file(dir / "spread.toml", config(out));
    const auto result = run_cpm_mpi(ranks, "run --quiet " + (dir / "spread.toml").string());
    ASSERT_EQ(result.exit_code, 0) << result.standard_error;
    expect_same_run(dir / "one", out, std::to_string(ranks) + " ranks");
    EXPECT_NE(read_file(out / "run_info.txt").find("mpi_ranks = " + std::to_string(ranks)),
              std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// The particle-mesh sum over 2 and 4 ranks (particles migrating between slabs of the mesh) in 2D
// and 3D.
TEST(RunOverRanks, ParticleMeshRunsIn2DAnd3DFollowOneProcess) {
  const auto dir = fresh_directory("run_ranks_mesh");
  for (const bool three_d : {false, true}) {
    const std::string dimension = three_d ? "3d" : "2d";
    auto mesh = [&](const std::filesystem::path& out) {
      std::string text = replace(config(out), "\"direct\"", "\"mesh\"");
      if (three_d) text = replace(text, "[0.0, 0.0]", "[0.0, 0.0, 0.0]");
      return replace(text, "n = 61", "n = 400");
    };
    write_file(dir / "one.toml", mesh(dir / ("one" + dimension)));
    ASSERT_EQ(run_cpm("run --quiet " + (dir / "one.toml").string()).exit_code, 0);
    for (int ranks : {2, 4}) {
      const auto out = dir / (dimension + "_ranks" + std::to_string(ranks));
      write_file(dir / "spread.toml", mesh(out));
      const auto result = run_cpm_mpi(ranks, "run --quiet " + (dir / "spread.toml").string());
      ASSERT_EQ(result.exit_code, 0) << result.standard_error;
      expect_same_run(dir / ("one" + dimension), out,
                      dimension + " mesh, " + std::to_string(ranks) + " ranks");
      EXPECT_NE(read_file(out / "run_info.txt").find("distributed mesh"), std::string::npos);
    }
  }
  std::filesystem::remove_all(dir);
}

// Side by side with the grid solver (each rank its slab of the grid) on 2 and 4 ranks: the
// particles spread, the distances measured on the gathered particles and density; and a run
// written on 2 ranks continues on 3.
TEST(RunOverRanks, SideBySideRunsFollowOneProcessAndContinueOnOtherRankCounts) {
  const auto dir = fresh_directory("run_ranks_grid");
  auto with_grid = [&](const std::filesystem::path& out, double t_end, int outputs) {
    return config(out, t_end, outputs) + "[grid]\ncells = 48\n";
  };
  write_file(dir / "one.toml", with_grid(dir / "one", 0.02, 4));
  ASSERT_EQ(run_cpm("run --quiet " + (dir / "one.toml").string()).exit_code, 0);
  testing::CommandResult result;
  for (int ranks : {2, 4}) {
    const auto out = dir / ("ranks" + std::to_string(ranks));
    write_file(dir / "spread.toml", with_grid(out, 0.02, 4));
    result = run_cpm_mpi(ranks, "run --quiet " + (dir / "spread.toml").string());
    ASSERT_EQ(result.exit_code, 0) << result.standard_error;
    expect_same_run(dir / "one", out, "side by side, " + std::to_string(ranks) + " ranks",
                    "side_by_side.csv");
  }
  write_file(dir / "first.toml", with_grid(dir / "first", 0.01, 2));
  ASSERT_EQ(run_cpm_mpi(2, "run --quiet " + (dir / "first.toml").string()).exit_code, 0);
  write_file(dir / "rest.toml", with_grid(dir / "rest", 0.02, 4));
  result = run_cpm_mpi(3, "run --quiet " + (dir / "rest.toml").string() + " --restart " +
                              (dir / "first" / "run.h5").string());
  ASSERT_EQ(result.exit_code, 0) << result.standard_error;
  const Checkpoint whole = read_checkpoint((dir / "one" / "run.h5").string());
  const Checkpoint rest = read_checkpoint((dir / "rest" / "run.h5").string());
  EXPECT_EQ(whole.state.time, rest.state.time);
  EXPECT_LT((whole.positions - rest.positions).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LE((whole.density - rest.density).cwiseAbs().maxCoeff(),
            1e-12 * whole.density.cwiseAbs().maxCoeff());
  std::filesystem::remove_all(dir);
}

// The checkpoint holds every particle in id order, whatever the ranks that wrote it.
TEST(RunOverRanks, ARunWrittenByTwoRanksContinuesOnThree) {
  const auto dir = fresh_directory("run_ranks_restart");
  write_file(dir / "whole.toml", config(dir / "whole"));
  ASSERT_EQ(run_cpm("run --quiet " + (dir / "whole.toml").string()).exit_code, 0);
  write_file(dir / "first.toml", config(dir / "first", 0.01, 2));
  ASSERT_EQ(run_cpm_mpi(2, "run --quiet " + (dir / "first.toml").string()).exit_code, 0);
  write_file(dir / "rest.toml", config(dir / "rest"));
  const auto result = run_cpm_mpi(3, "run --quiet " + (dir / "rest.toml").string() + " --restart " +
                                         (dir / "first" / "run.h5").string());
  ASSERT_EQ(result.exit_code, 0) << result.standard_error;
  const Checkpoint whole = read_checkpoint((dir / "whole" / "run.h5").string());
  const Checkpoint rest = read_checkpoint((dir / "rest" / "run.h5").string());
  EXPECT_EQ(whole.state.time, rest.state.time);
  EXPECT_LT((whole.positions - rest.positions).cwiseAbs().maxCoeff(), 1e-10);
  std::filesystem::remove_all(dir);
}

// Expects exit code 2 and exactly one line from cpm holding `needle` (mpirun adds its own lines
// about a rank's nonzero exit code).
void expect_refused(const std::string& name, const std::string& text, const std::string& needle,
                    const std::string& extra = "") {
  const auto dir = fresh_directory(name);
  write_file(dir / "run.toml", text);
  const auto result = run_cpm_mpi(2, "run --quiet " + (dir / "run.toml").string() + extra);
  EXPECT_EQ(result.exit_code, 2) << name << ": " << result.standard_error;
  std::size_t lines = 0;
  for (auto at = result.standard_error.find("cpm: "); at != std::string::npos;
       at = result.standard_error.find("cpm: ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << name << ": " << result.standard_error;
  EXPECT_NE(result.standard_error.find(needle), std::string::npos)
      << name << ": " << result.standard_error;
  std::filesystem::remove_all(dir);
}

TEST(RunOverRanks, WhatDoesNotSpreadYetIsRefusedOnceBeforeAnythingIsWritten) {
  const auto out = std::filesystem::temp_directory_path() / "cpm_ranks_never_written";
  std::filesystem::remove_all(out);
  const std::string good = config(out);
  expect_refused("ranks_integrator",
                 replace(good, "beta = 50.0", "beta = 50.0\nintegrator = \"gradient_flow\""),
                 "dynamics.integrator");
  expect_refused("ranks_memory", replace(good, "n = 61", "n = 100000000000"),
                 "particles.n: a run of 100000000000 particles over 2 MPI ranks needs at least");
  expect_refused("ranks_bad_key", replace(good, "seed = 5", "seed = 5\nsed = 4"), "particles.sed");
  EXPECT_FALSE(std::filesystem::exists(out));
  // An output folder with results in it, without --overwrite: refused by the first rank alone,
  // reported once, the results kept.
  std::filesystem::create_directories(out);
  write_file(out / "observables.csv", "earlier results\n");
  expect_refused("ranks_existing", good, "--overwrite");
  EXPECT_EQ(read_file(out / "observables.csv"), "earlier results\n");
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace cpm
