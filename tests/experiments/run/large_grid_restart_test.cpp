// Restarts on grids large enough for timed FFTW plans (FFTW_MEASURE from 2^18 padded points): the
// checkpoint carries FFTW's wisdom, so a run continued in another process uses the plans of the
// run it continues and ends bit for bit where one uninterrupted run with those plans ends.
#include <gtest/gtest.h>

#include "experiments/run/side_by_side.hpp"
#include "io/h5md_reader.hpp"
#include "solvers/fft_convolution.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

// 256² cells: the zero-padded grid has 512² = 2^18 points, planned with FFTW_MEASURE.
const char* kLargeGrid2D = R"([particles]
n = 50
seed = 7
[domain]
kind = "box"
lower = [-3.0, -3.0]
upper = [3.0, 3.0]
[interaction]
kernel = "log"
lambda = 1.0
[initial]
law = "gaussian"
centre = [0.0, 0.0]
std = 0.6
[dynamics]
beta = 10.0
step = 1e-3
[grid]
cells = [256]
)";

// The model with its [dynamics] run length and the output folder.
std::string with_dynamics(double t_end, int outputs, const std::string& directory) {
  std::string text = kLargeGrid2D;
  const std::string anchor = "step = 1e-3\n";
  text.insert(text.find(anchor) + anchor.size(),
              "t_end = " + std::to_string(t_end) + "\noutputs = " + std::to_string(outputs) + "\n");
  return text + "[output]\ndirectory = \"" + directory + "\"\n";
}

TEST(LargeGridRestart, CheckpointCarriesFftwWisdomAndAContinuedProcessEndsBitForBit) {
  const auto dir = testing::fresh_directory("large_grid_restart");
  const std::string first = (dir / "first").string(), second = (dir / "second").string(),
                    whole = (dir / "whole").string();
  testing::write_file(dir / "first.toml", with_dynamics(0.01, 2, first));
  testing::write_file(dir / "second.toml", with_dynamics(0.02, 4, second));
  // [0, T/2] in one process, [T/2, T] from its checkpoint in another.
  const auto a = testing::run_cpm("run " + (dir / "first.toml").string());
  ASSERT_EQ(a.exit_code, 0) << a.standard_error;
  const std::string wisdom = read_checkpoint_fft_wisdom(first + "/run.h5");
  ASSERT_NE(wisdom.find("fftw_wisdom"), std::string::npos) << wisdom.substr(0, 200);
  const auto b =
      testing::run_cpm("run " + (dir / "second.toml").string() + " --restart " + first + "/run.h5");
  ASSERT_EQ(b.exit_code, 0) << b.standard_error;

  // [0, T] uninterrupted in this process, with the plans the first process measured.
  ASSERT_TRUE(import_fft_wisdom(wisdom));
  CommandOptions options;
  options.progress = false;
  run_side_by_side(parse_run_config(with_dynamics(0.02, 4, whole), "whole"), options);

  const H5mdRun continued = read_h5md(second + "/run.h5"),
                uninterrupted = read_h5md(whole + "/run.h5");
  ASSERT_EQ(continued.position_clock.time.back(), uninterrupted.position_clock.time.back());
  EXPECT_TRUE(continued.positions.back() == uninterrupted.positions.back());
  const auto& rho_continued = continued.fields.at("density").second.back();
  const auto& rho_whole = uninterrupted.fields.at("density").second.back();
  EXPECT_TRUE(rho_continued == rho_whole)
      << "largest difference " << (rho_continued - rho_whole).cwiseAbs().maxCoeff();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
