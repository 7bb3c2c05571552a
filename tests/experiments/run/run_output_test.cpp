// `cpm run` with a [grid] section writes its frames to run.h5 (H5MD) and run.pvd (ParaView), and
// the last H5MD frame is a checkpoint holding exactly the particles and density of the run.
#include "experiments/run/run_output.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

TEST(RunOutput, SideBySideRunWritesH5mdAndParaViewFramesAndACheckpoint) {
  const auto dir = testing::fresh_directory("run_output");
  testing::write_file(dir / "run.toml", R"([particles]
n = 40
seed = 2
[domain]
kind = "ball"
centre = [0.0]
radius = 3.0
[potential]
kind = "quadratic"
[interaction]
kernel = "quadratic"
kappa = 0.5
[initial]
law = "gaussian"
centre = [0.0]
std = 0.5
[dynamics]
beta = 5.0
step = 1e-2
t_end = 0.1
outputs = 2
[grid]
cells = [64]
[output]
directory = ")" + (dir / "out").string() + "\"\n");
  ASSERT_EQ(testing::run_cpm("run " + (dir / "run.toml").string()).exit_code, 0);
  const auto out = dir / "out";
  EXPECT_TRUE(std::filesystem::exists(out / "run.pvd"));
  for (const std::string k : {"0000", "0001", "0002"}) {
    EXPECT_TRUE(std::filesystem::exists(out / "run_frames" / ("run_particles_" + k + ".vtp"))) << k;
    EXPECT_TRUE(std::filesystem::exists(out / "run_frames" / ("run_grid_" + k + ".vti"))) << k;
  }
  const Checkpoint c = read_checkpoint((out / "run.h5").string());
  EXPECT_EQ(c.state.step, 10);  // t_end / step Langevin steps
  EXPECT_DOUBLE_EQ(c.state.time, 0.1);
  EXPECT_EQ(c.positions.rows(), 40);
  EXPECT_EQ(c.density.size(), 64);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
