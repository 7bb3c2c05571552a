// `cpm run` with dynamics.integrator = "minimize" writes one frame (the equilibrium, labelled
// t_end), the convergence history minimization.csv down to the tolerance, and the outcome in
// run_info.txt; an implicit integrator runs through the same loop.
#include "experiments/run/minimization_report.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"
#include "viz/plot.hpp"

namespace cpm {
namespace {

std::string crowded_gas(const std::filesystem::path& out, const std::string& dynamics) {
  return R"([particles]
n = 50
seed = 1
[domain]
kind = "ball"
centre = [0.0]
radius = 1.0
[interaction]
kernel = "riesz"
s = 0.5
[initial]
law = "uniform_ball"
centre = [0.0]
radius = 0.5
[dynamics]
)" + dynamics +
         "[output]\ndirectory = \"" + out.string() + "\"\n";
}

TEST(MinimizationReport, MinimiseRunWritesOneFrameAndTheConvergenceHistory) {
  const auto dir = testing::fresh_directory("minimization_report");
  testing::write_file(dir / "run.toml", crowded_gas(dir / "out",
                                                    "integrator = \"minimize\"\ntolerance = 1e-10\n"
                                                    "t_end = 2.0\noutputs = 10\n"));
  ASSERT_EQ(testing::run_cpm("run " + (dir / "run.toml").string()).exit_code, 0);
  const auto out = dir / "out";
  EXPECT_TRUE(std::filesystem::exists(out / "run_frames" / "run_particles_0000.vtp"));
  EXPECT_FALSE(std::filesystem::exists(out / "run_frames" / "run_particles_0001.vtp"));
  const Checkpoint c = read_checkpoint((out / "run.h5").string());
  EXPECT_DOUBLE_EQ(c.state.time, 2.0);
  EXPECT_DOUBLE_EQ(c.positions.cwiseAbs().maxCoeff(), 1.0);

  const auto history =
      read_table_columns((out / "minimization.csv").string(), {"iteration", "gradient_norm"});
  ASSERT_GE(history[0].size(), 2u);
  EXPECT_EQ(history[0].front(), 0.0);
  EXPECT_LE(history[1].back(), 1e-10);
  EXPECT_GT(history[1].front(), 1e-10);
  EXPECT_EQ(static_cast<std::int64_t>(history[0].back()), c.state.step);
  const std::string info = testing::read_file(out / "run_info.txt");
  EXPECT_NE(info.find("minimizer_iterations = "), std::string::npos) << info;
  EXPECT_NE(info.find("minimizer_gradient_norm = "), std::string::npos) << info;
  std::filesystem::remove_all(dir);
}

TEST(MinimizationReport, ImplicitIntegratorsRunThroughTheRunLoop) {
  for (const std::string integrator : {"implicit_gradient_flow", "implicit_langevin"}) {
    const auto dir = testing::fresh_directory("implicit_run_" + integrator);
    testing::write_file(
        dir / "run.toml",
        crowded_gas(dir / "out", "integrator = \"" + integrator +
                                     "\"\nstep = 0.01\nt_end = 0.1\noutputs = 2\n" +
                                     (integrator == "implicit_langevin" ? "beta = 1e4\n" : "")));
    ASSERT_EQ(testing::run_cpm("run " + (dir / "run.toml").string()).exit_code, 0) << integrator;
    const Checkpoint c = read_checkpoint((dir / "out" / "run.h5").string());
    EXPECT_DOUBLE_EQ(c.state.time, 0.1) << integrator;
    EXPECT_LE(c.positions.cwiseAbs().maxCoeff(), 1.0) << integrator;
    EXPECT_FALSE(std::filesystem::exists(dir / "out" / "minimization.csv")) << integrator;
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace cpm
