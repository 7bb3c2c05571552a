// `cpm run --restart`: a run of T and a run of T/2 continued from its checkpoint for T/2 more end
// in bit-identical particles (and grid density), for every integrator the runner uses.
#include <gtest/gtest.h>

#include "experiments/run/particle_run.hpp"
#include "experiments/run/run_restart.hpp"
#include "experiments/run/side_by_side.hpp"
#include "io/h5md_reader.hpp"
#include "io/input_error.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

// A 2D gas with noise (Langevin), a 1D repulsive gas (mollified, since particles meet at the
// wall) pressed against the wall of a small ball (gradient flow with active projections), and the
// 1D log gas side by side with its grid.
const char* kLangevin2D = R"([particles]
n = 60
seed = 11
[domain]
kind = "ball"
centre = [0.0, 0.0]
radius = 1.5
[potential]
kind = "quadratic"
[interaction]
kernel = "mollified"
s = 1.0
epsilon = 0.1
[initial]
law = "gaussian"
std = 0.5
[dynamics]
beta = 5.0
step = 1e-3
)";

const char* kGradientFlowAtTheWall = R"([particles]
n = 40
seed = 5
[domain]
kind = "ball"
centre = [0.0]
radius = 0.3
[potential]
kind = "zero"
[interaction]
kernel = "mollified"
s = 0.5
epsilon = 0.05
[initial]
law = "gaussian"
std = 0.2
[dynamics]
integrator = "gradient_flow"
step = 1e-3
)";

const char* kSideBySide1D = R"([particles]
n = 80
seed = 2
[domain]
kind = "ball"
centre = [0.0]
radius = 3.0
[interaction]
kernel = "log"
[initial]
law = "gaussian"
std = 0.5
[dynamics]
integrator = "gradient_flow"
[grid]
cells = [120]
)";

RunConfig configured(const std::string& model, double t_end, int outputs,
                     const std::string& directory) {
  RunConfig c = parse_run_config(model + "[output]\ndirectory = \"" + directory + "\"\n", "test");
  c.dynamics.t_end = t_end;
  c.dynamics.outputs = outputs;
  return c;
}

void run(const RunConfig& config, const std::string& restart = "") {
  CommandOptions options;
  options.progress = false;
  options.restart = restart;
  if (config.grid)
    run_side_by_side(config, options);
  else
    run_particles(config, options);
}

// Runs [0, T] in one go and [0, T/2] then [T/2, T] from the checkpoint; compares the last frames.
void expect_bit_identical_continuation(const std::string& name, const std::string& model,
                                       double t_end) {
  const auto dir = testing::fresh_directory("restart_" + name);
  const std::string whole = (dir / "whole").string(), first = (dir / "first").string(),
                    second = (dir / "second").string();
  run(configured(model, t_end, 8, whole));
  run(configured(model, t_end / 2, 4, first));
  run(configured(model, t_end, 8, second), first + "/run.h5");

  const H5mdRun a = read_h5md(whole + "/run.h5"), b = read_h5md(second + "/run.h5");
  ASSERT_EQ(a.positions.size(), 9u);
  ASSERT_EQ(b.positions.size(), 5u);  // the checkpoint's time, then the four output times after it
  EXPECT_EQ(b.position_clock.time.front(), t_end / 2);
  EXPECT_EQ(a.position_clock.time.back(), b.position_clock.time.back());
  EXPECT_EQ(a.position_clock.step.back(), b.position_clock.step.back()) << name;
  EXPECT_TRUE(a.positions.back() == b.positions.back())
      << name << ": largest difference "
      << (a.positions.back() - b.positions.back()).cwiseAbs().maxCoeff();
  EXPECT_FALSE(a.positions.back() == a.positions[4]) << name << ": the particles did not move";
  ASSERT_TRUE(a.restart && b.restart);
  EXPECT_EQ(a.restart->solver_state, b.restart->solver_state) << name;
  if (a.fields.count("density")) {
    ASSERT_TRUE(b.fields.count("density"));
    EXPECT_TRUE(a.fields.at("density").second.back() == b.fields.at("density").second.back())
        << name;
  }
}

TEST(RunRestart, LangevinContinuesBitForBit) {
  expect_bit_identical_continuation("langevin", kLangevin2D, 0.04);
}

TEST(RunRestart, GradientFlowWithProjectionsContinuesBitForBit) {
  expect_bit_identical_continuation("gradient_flow", kGradientFlowAtTheWall, 0.2);
}

TEST(RunRestart, SideBySideContinuesBitForBitIncludingTheGridDensity) {
  expect_bit_identical_continuation("side_by_side", kSideBySide1D, 0.4);
}

TEST(RunRestart, ContinuedRunWritesTheCheckpointTimeThenTheLaterOutputTimes) {
  DynamicsConfig d;
  d.t_end = 1.0;
  d.outputs = 4;
  EXPECT_EQ(output_times(d), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
  EXPECT_EQ(output_times(d, 0.5), (std::vector<double>{0.5, 0.75, 1.0}));
  EXPECT_EQ(output_times(d, 0.6), (std::vector<double>{0.6, 0.75, 1.0}));
}

TEST(RunRestart, CheckpointOfAnotherModelIsRefusedNamingTheParameter) {
  const auto dir = testing::fresh_directory("restart_other_model");
  run(configured(kLangevin2D, 0.01, 2, (dir / "first").string()));
  RunConfig other = configured(kLangevin2D, 0.02, 4, (dir / "second").string());
  other.dynamics.beta = 6.0;
  try {
    load_restart(other, (dir / "first/run.h5").string());
    FAIL() << "a checkpoint at another beta was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dynamics.beta"), std::string::npos) << e.what();
  }
  other.dynamics.beta = 5.0;
  other.n = 61;
  EXPECT_THROW(load_restart(other, (dir / "first/run.h5").string()), InputError);
}

}  // namespace
}  // namespace cpm
