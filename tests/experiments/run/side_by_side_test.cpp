// The side-by-side runner: particles and grid solver from one initial law on one clock; the
// particle-versus-PDE distance shrinks as N grows; the run's table; bad grid inputs through the
// `cpm` binary (exit code 2, one line, nothing written).
#include "experiments/run/side_by_side.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/command_runner.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

std::size_t column(const std::vector<std::string>& columns, const std::string& name) {
  const auto at = std::find(columns.begin(), columns.end(), name);
  EXPECT_NE(at, columns.end()) << name;
  return static_cast<std::size_t>(at - columns.begin());
}

// docs/exact_solutions.md §2 in 1D: V = x²/2, W = |z|²/2, β = 2, from N(0.5, 0.3²); noisy Langevin
// particles against the grid solution, which stays Gaussian.
std::string gaussian_case(long n) {
  return R"([particles]
n = )" + std::to_string(n) +
         R"(
seed = 7
[domain]
kind = "whole_space"
dim = 1
[potential]
kind = "quadratic"
strength = 1.0
[interaction]
kernel = "quadratic"
kappa = 1.0
lambda = 1.0
[initial]
law = "gaussian"
centre = [0.5]
std = 0.3
[dynamics]
beta = 2.0
step = 0.005
t_end = 0.5
outputs = 1
[grid]
cells = [400]
lower = [-4.0]
upper = [4.0]
)";
}

TEST(SideBySide, GaussianCaseDistanceAtTheFinalTimeShrinksAsNGrows) {
  // The floor for N i.i.d. samples is E W1 ≈ 1.288 σ_T/√N (docs/exact_solutions.md §4), σ_T ≈ 0.48.
  std::vector<double> w1;
  for (long n : {100L, 1000L, 10000L}) {
    SideBySideRun run(parse_run_config(gaussian_case(n), "gaussian case"));
    const std::vector<std::string> columns = run.columns();
    run.advance_to(0.5);
    const std::vector<double> row = run.measure();
    EXPECT_DOUBLE_EQ(row[column(columns, "time")], 0.5);
    w1.push_back(row[column(columns, "w1")]);
    std::cout << "N=" << n << " W1(particles, grid) at t=0.5: " << w1.back() << "  (i.i.d. floor ~ "
              << 1.288 * 0.478 / std::sqrt(double(n)) << ")\n";
  }
  EXPECT_LT(w1[1], w1[0]);
  EXPECT_LT(w1[2], w1[1]);
  EXPECT_LT(w1[2], 0.03);
}

TEST(SideBySide, BothSidesStartFromTheSameLawOnTheSameClock) {
  SideBySideRun run(parse_run_config(gaussian_case(5000), "gaussian case"));
  const std::vector<std::string> columns = run.columns();
  const std::vector<double> row = run.measure();
  EXPECT_EQ(run.time(), 0.0);
  EXPECT_NEAR(row[column(columns, "grid_mass")], 1.0, 1e-12);
  // Standard errors for N = 5000 draws of N(0.5, 0.3²): 0.0042 (mean), 0.0018 (variance);
  // the W1 floor is 1.288 · 0.3/√N ≈ 0.0055.
  EXPECT_NEAR(row[column(columns, "particle_mean_0")], row[column(columns, "grid_mean_0")], 0.015);
  EXPECT_NEAR(row[column(columns, "particle_cov_00")], row[column(columns, "grid_cov_00")], 0.006);
  EXPECT_LT(row[column(columns, "w1")], 0.015);
  run.advance_to(0.1);
  EXPECT_DOUBLE_EQ(run.time(), 0.1);
  EXPECT_DOUBLE_EQ(run.particle_integrator().time(), 0.1);
}

// The figure's profiles: at every measured time the particles' histogram and the grid density's
// marginal are probability densities on x_0, and for N = 5000 draws they agree bin by bin within
// a few standard errors (√(p(1−p)/N)/h per bin).
TEST(SideBySide, ProfilesAreTheHistogramAndTheDensityOnTheSameAxis) {
  SideBySideRun run(parse_run_config(gaussian_case(5000), "gaussian case"));
  run.measure();
  run.advance_to(0.2);
  run.measure();
  ASSERT_EQ(run.profiles().size(), 2u);
  const SideBySideRun::Profile& p = run.profiles().back();
  EXPECT_DOUBLE_EQ(p.time, 0.2);
  ASSERT_EQ(p.cell_centres.size(), 400u);
  const double h = 8.0 / 400;
  double mass = 0.0;
  for (double rho : p.density) mass += rho * h;
  EXPECT_NEAR(mass, 1.0, 1e-12);
  ASSERT_EQ(p.bin_centres.size(), p.histogram.size());
  // Bins of whole cells, all of one width but the last.
  const int per_bin = static_cast<int>(std::lround((p.bin_centres[1] - p.bin_centres[0]) / h));
  double particles = 0.0;
  for (std::size_t b = 0; b < p.histogram.size(); ++b) {
    const int first = static_cast<int>(b) * per_bin, cells = std::min(per_bin, 400 - first);
    const double width = cells * h;
    double expected = 0.0;
    for (int c = first; c < first + cells; ++c) expected += p.density[c] / cells;
    const double se = std::sqrt(expected * width * (1.0 - expected * width) / 5000.0) / width;
    EXPECT_NEAR(p.histogram[b], expected, 5.0 * se + 1e-3) << "bin at " << p.bin_centres[b];
    particles += p.histogram[b] * width;
  }
  EXPECT_NEAR(particles, 1.0, 1e-12);
}

const char* kTwoDimensional = R"([particles]
n = 200
seed = 2
[domain]
kind = "ball"
centre = [0.0, 0.0]
radius = 2.0
[potential]
kind = "quadratic"
strength = 1.0
[interaction]
kernel = "riesz"
s = 1.0
lambda = 1.0
[initial]
law = "gaussian"
centre = [0.2, 0.0]
std = 0.4
[dynamics]
beta = 50.0
step = 2e-4
t_end = 0.2
outputs = 4
[grid]
cells = [40, 40]
)";

std::vector<std::vector<double>> read_table(const std::string& path, std::string& header) {
  std::ifstream in(path);
  std::getline(in, header);
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<double> row;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

TEST(SideBySide, RunWritesOneRowPerOutputTimeWithAHeader) {
  RunConfig config = parse_run_config(kTwoDimensional, "two-dimensional case");
  config.output.directory = testing_support::fresh_path("side_by_side_2d");
  run_side_by_side(config, CommandOptions{.overwrite = false, .progress = false, .restart = ""});
  std::string header;
  const auto rows = read_table(config.output.directory + "/side_by_side.csv", header);
  const std::vector<std::string> columns = SideBySideRun(config).columns();
  std::string expected;
  for (const std::string& c : columns) expected += (expected.empty() ? "" : ",") + c;
  EXPECT_EQ(header, expected);
  EXPECT_EQ(header.find("w1"), std::string::npos);  // exact W1/W2 only in 1D
  ASSERT_EQ(rows.size(), 5u);
  const std::size_t f = column(columns, "grid_free_energy"), m = column(columns, "grid_mass");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    ASSERT_EQ(rows[k].size(), columns.size());
    EXPECT_NEAR(rows[k][0], 0.05 * k, 1e-12);
    EXPECT_NEAR(rows[k][m], rows[0][m], 1e-12 * rows[0][m]);
    if (k > 0) {
      EXPECT_LE(rows[k][f], rows[k - 1][f]);
    }
  }
  for (const char* file :
       {"run.h5", "run.pvd", "run_frames/run_particles_0004.vtp", "run_frames/run_grid_0004.vti",
        "side_by_side.png", "energies.png", "run_info.txt"})
    EXPECT_TRUE(std::filesystem::exists(config.output.directory + "/" + file)) << file;
}

// Bad grid inputs through the binary.
void expect_rejected(const std::string& name, const std::string& config,
                     const std::string& needle) {
  const std::filesystem::path dir = testing_support::fresh_path("bad_grid_" + name);
  std::filesystem::create_directories(dir);
  const std::filesystem::path out = dir / "out";
  testing::write_file(dir / "bad.toml",
                      config + "[output]\ndirectory = \"" + out.string() + "\"\n");
  const auto result = testing::run_cpm("run " + (dir / "bad.toml").string());
  EXPECT_EQ(result.exit_code, 2) << name << ": " << result.standard_error;
  EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1)
      << name << ": " << result.standard_error;
  EXPECT_NE(result.standard_error.find(needle), std::string::npos)
      << name << ": " << result.standard_error;
  EXPECT_FALSE(std::filesystem::exists(out)) << name;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(SideBySide, BadGridInputsStopWithExitCodeTwoAndOneLine) {
  const std::string good = kTwoDimensional;
  expect_rejected("too_few_cells", replaced(good, "cells = [40, 40]", "cells = [40, 3]"),
                  "grid.cells: grid too small for the domain");
  expect_rejected("box_inside_domain",
                  replaced(good, "cells = [40, 40]",
                           "cells = [40, 40]\nlower = [-1.0, -1.0]\nupper = [1.0, 1.0]"),
                  "grid.lower: grid too small for the domain");
  expect_rejected("law_outside_box",
                  replaced(replaced(gaussian_case(10), "lower = [-4.0]", "lower = [-0.5]"),
                           "upper = [4.0]", "upper = [0.5]"),
                  "grid too small for the initial law");
  expect_rejected(
      "whole_space_without_box",
      replaced(replaced(gaussian_case(10), "lower = [-4.0]\n", ""), "upper = [4.0]\n", ""),
      "grid.lower: missing");
  expect_rejected("step_above_cfl",
                  replaced(good, "cells = [40, 40]", "cells = [40, 40]\nstep = 1.0"),
                  "grid.step: 1 exceeds the stability bound");
  expect_rejected("unknown_scheme",
                  replaced(good, "cells = [40, 40]", "cells = [40, 40]\nscheme = \"third_order\""),
                  "grid.scheme: unknown value 'third_order'");

  const std::filesystem::path dir = testing_support::fresh_path("density_files");
  std::filesystem::create_directories(dir);
  auto density_config = [&](const std::string& file, const std::string& values) {
    testing::write_file(dir / file, values);
    return replaced(gaussian_case(10), "cells = [400]", "cells = [4]") +
           "[grid.initial]\nkind = \"file\"\nfile = \"" + (dir / file).string() + "\"\n";
  };
  expect_rejected("negative_density", density_config("negative.txt", "# rho\n0.1, 0.2\n-0.3 0.1\n"),
                  "negative.txt:3: negative density -0.3");
  expect_rejected("zero_mass", density_config("zero.txt", "0 0 0 0\n"),
                  "zero.txt: the density has zero mass");
  expect_rejected("wrong_count", density_config("short.txt", "1 2 3\n"),
                  "short.txt: holds 3 values for a grid of 4 cells");
}

TEST(SideBySide, GridSchemeChoosesTheFluxSecondOrderByDefault) {
  SideBySideRun by_default(parse_run_config(gaussian_case(10), "gaussian case"));
  EXPECT_EQ(by_default.grid_solver().parameters().reconstruction, Reconstruction::limited_linear);
  SideBySideRun first(parse_run_config(
      replaced(gaussian_case(10), "cells = [400]", "cells = [400]\nscheme = \"first_order\""),
      "gaussian case"));
  EXPECT_EQ(first.grid_solver().parameters().reconstruction, Reconstruction::first_order);
}

TEST(SideBySide, DensityFileStartsTheGridAndTheParticles) {
  const std::filesystem::path dir = testing_support::fresh_path("density_file_start");
  std::filesystem::create_directories(dir);
  testing::write_file(dir / "rho.txt", "0 1 3 0\n");  // cells of [−4, 4]: mass in [−2, 2]
  RunConfig config = parse_run_config(
      replaced(gaussian_case(4000), "cells = [400]", "cells = [4]") +
          "[grid.initial]\nkind = \"file\"\nfile = \"" + (dir / "rho.txt").string() + "\"\n",
      "density file case");
  SideBySideRun run(config);
  const auto& rho = run.grid_solver().density();
  EXPECT_NEAR(rho[1], 0.125 * 1.0 / 1.0, 1e-14);  // normalised: (1, 3)/(4 · 2)
  EXPECT_NEAR(rho[2], 0.375, 1e-14);
  const Eigen::VectorXd x = run.particles().positions.col(0);
  EXPECT_GE(x.minCoeff(), -2.0);
  EXPECT_LE(x.maxCoeff(), 2.0);
  EXPECT_NEAR((x.array() > 0.0).cast<double>().mean(), 0.75, 0.03);
}

}  // namespace
}  // namespace cpm
