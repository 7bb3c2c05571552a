#include "experiments/studies/convergence_study.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::run_cpm;
using testing::write_file;

// A small 1D log gas with noise (examples/converge_log_gas_1d.toml, scaled down).
std::string log_gas_config(const std::filesystem::path& out, const std::string& study) {
  return R"([particles]
seed = 5
[domain]
kind = "ball"
centre = [0.0]
radius = 3.0
[potential]
kind = "quadratic"
[interaction]
kernel = "log"
method = "mesh"
mesh_near_cells = -1
[initial]
law = "gaussian"
centre = [0.0]
std = 0.5
[dynamics]
beta = 10.0
step = 2e-3
t_end = 0.2
outputs = 2
[grid]
cells = [256]
)" + study +
         "[output]\ndirectory = \"" + out.string() + "\"\n";
}

TEST(ConvergenceStudy, LogGasW1DecaysWithSlopeOneHalfWithinItsInterval) {
  // With noise the particle-versus-PDE distance is dominated by sampling, so W1 ~ N^{-1/2}: the
  // bootstrap interval of the fitted slope must contain −1/2, and the dynamics must add no error
  // beyond the i.i.d. sampling floor (the repulsion even keeps the particles more regular).
  const auto dir = fresh_directory("converge_log_gas");
  write_file(dir / "c.toml", log_gas_config(dir / "out",
                                            "[convergence]\nns = [64, 256, 1024, 4096]\nreplicas = "
                                            "12\nmetrics = [\"w1\", \"w2\", \"l1\"]\n"));
  const MpiEnvironment& mpi = []() -> const MpiEnvironment& {
    static MpiEnvironment m;
    return m;
  }();
  const ConvergenceResult r =
      run_convergence_study(mpi, load_convergence_config((dir / "c.toml").string()),
                            {.overwrite = false, .progress = false, .restart = ""});
  ASSERT_EQ(r.rates.size(), 3u);
  const RateFit& w1 = r.rates[0];
  std::printf("W1 slope %.3f, interval [%.3f, %.3f]; floor slope %.3f\n", w1.slope, w1.slope_low,
              w1.slope_high, r.floor_rates[0].slope);
  EXPECT_LE(w1.slope_low, -0.5);
  EXPECT_GE(w1.slope_high, -0.5);
  for (std::size_t i = 0; i < 4; ++i) {
    const double particles = r.summary[i].back()[0].mean, floor = r.floor[i][0].mean;
    std::printf("N index %zu: W1 %.5f, i.i.d. floor %.5f\n", i, particles, floor);
    EXPECT_LT(particles, 1.5 * floor);
  }
  for (const char* file :
       {"convergence.csv", "convergence.h5", "convergence_rates.csv", "convergence.png"})
    EXPECT_TRUE(std::filesystem::exists(dir / "out" / file)) << file;
  std::filesystem::remove_all(dir);
}

TEST(ConvergenceStudy, BadStudySectionsGiveExitCodeTwo) {
  const auto dir = fresh_directory("converge_bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[convergence]\nns = []\n", "convergence.ns: must not be empty"},
      {"[convergence]\nns = [10, 20]\nreplicas = 1\n", "convergence.replicas: must be at least 2"},
      {"[convergence]\nns = [10]\nmetrics = [\"kl\"]\n",
       "convergence.metrics: unknown metric 'kl'"},
  };
  for (const auto& [section, message] : cases) {
    write_file(dir / "bad.toml", log_gas_config(dir / "out", section));
    const auto result = run_cpm("converge " + (dir / "bad.toml").string());
    EXPECT_EQ(result.exit_code, 2) << section;
    EXPECT_NE(result.standard_error.find(message), std::string::npos) << result.standard_error;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  }
  std::filesystem::remove_all(dir);
}

TEST(ConvergenceStudy, TwoMpiRanksGiveTheSameTableAsOneProcess) {
  const auto dir = fresh_directory("converge_mpi");
  const std::string study = "[convergence]\nns = [20, 40]\nreplicas = 5\nbootstrap = 200\n";
  write_file(dir / "single.toml", log_gas_config(dir / "single", study));
  write_file(dir / "ranks.toml", log_gas_config(dir / "ranks", study));
  ASSERT_EQ(run_cpm("converge --quiet " + (dir / "single.toml").string()).exit_code, 0);
  ASSERT_EQ(testing::run_cpm_mpi(2, "converge --quiet " + (dir / "ranks.toml").string()).exit_code,
            0);
  EXPECT_EQ(testing::read_file(dir / "single" / "convergence.csv"),
            testing::read_file(dir / "ranks" / "convergence.csv"));
  EXPECT_EQ(testing::read_file(dir / "single" / "convergence_rates.csv"),
            testing::read_file(dir / "ranks" / "convergence_rates.csv"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
