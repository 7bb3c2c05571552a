#include "experiments/studies/ldp_study.hpp"

#include <gtest/gtest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <fstream>
#include <random>

#include "io/hdf5_table.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::run_cpm;
using testing::write_file;

const MpiEnvironment& mpi() {
  static const MpiEnvironment environment;
  return environment;
}

std::string gaussian_config(const std::filesystem::path& out, const std::string& ldp_section) {
  return R"([particles]
seed = 3
[domain]
kind = "whole_space"
dim = 1
[potential]
kind = "quadratic"
strength = 1.0
[interaction]
kernel = "quadratic"
kappa = 0.5
[initial]
law = "gaussian"
std = 0.5
[dynamics]
beta = 2.0
step = 0.02
t_end = 3.0
)" + ldp_section +
         "[output]\ndirectory = \"" + out.string() + "\"\n";
}

TEST(LdpStudy, WilsonIntervalMatchesTheClosedForm) {
  double low, high;
  wilson_interval(0, 100, 1.959963984540054, low, high);
  EXPECT_NEAR(low, 0.0, 1e-15);
  EXPECT_NEAR(high, 0.036994, 1e-6);  // z²/(n + z²)
  wilson_interval(50, 100, 1.959963984540054, low, high);
  EXPECT_NEAR(low, 0.403832, 1e-6);
  EXPECT_NEAR(high, 0.596168, 1e-6);
}

TEST(LdpStudy, WassersteinToNormalEqualsNumericalIntegralOfCdfDifference) {
  std::mt19937 rng(2);
  std::normal_distribution<double> normal(0.3, 1.4);
  std::vector<double> x(7);
  for (double& v : x) v = normal(rng);
  const double sigma = 1.2;
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  const boost::math::normal_distribution<double> unit;
  // Midpoint rule on each interval where the empirical CDF is constant (no jump inside a cell).
  std::vector<double> edges = {-15.0};
  edges.insert(edges.end(), sorted.begin(), sorted.end());
  edges.push_back(15.0);
  double integral = 0;
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
    const double f = double(i) / x.size();
    const int cells = 20000;
    const double h = (edges[i + 1] - edges[i]) / cells;
    for (int c = 0; c < cells; ++c) {
      const double mid = edges[i] + (c + 0.5) * h;
      integral += std::abs(f - boost::math::cdf(unit, mid / sigma)) * h;
    }
  }
  EXPECT_NEAR(wasserstein1_to_normal(x, sigma), integral, 1e-6);
}

TEST(LdpStudy, GaussianCaseTailProbabilitiesMatchTheExactStationaryLaw) {
  // The centre of mass is stationary N(0, 1/(βNa)): every empirical tail probability lies within
  // 4 standard errors of the exact value, and the empirical rates approach βaδ²/2 as N grows.
  const auto dir = fresh_directory("ldp_gaussian");
  const LdpConfig config = parse_ldp_config(
      gaussian_config(dir / "out",
                      "[ldp]\nns = [4, 16]\nreplicas = 1500\ndeltas = [0.1, 0.2, 0.3, 0.4]\n"),
      "test");
  const LdpResult result =
      run_ldp_study(mpi(), config, {.overwrite = false, .progress = false, .restart = ""});
  ASSERT_EQ(result.tails.size(), 8u);
  for (const TailEstimate& e : result.tails) {
    const double p = e.exact_probability;
    const double se = std::sqrt(p * (1 - p) / e.replicas);
    std::printf("N=%d delta=%.2f: P=%.4f exact %.4f, rate %.4f, asymptotic rate %.4f\n", e.n,
                e.delta, e.probability, p, e.rate, e.theory_rate);
    EXPECT_NEAR(e.probability, p, 4 * se + 1e-3) << "N=" << e.n << " delta=" << e.delta;
    EXPECT_NEAR(e.theory_rate, 0.5 * 2.0 * 1.0 * e.delta * e.delta, 1e-15);
  }
  // At δ = 0.4 the rate at N = 16 is closer to the asymptotic rate than at N = 4.
  EXPECT_LT(std::abs(result.tails[7].rate - result.tails[7].theory_rate),
            std::abs(result.tails[3].rate - result.tails[3].theory_rate));
  // ldp.h5 holds the same tables as the CSV files, and the study's parameters.
  const NamedTable tails = read_hdf5_table((dir / "out" / "ldp.h5").string(), "tails");
  ASSERT_EQ(tails.rows.size(), result.tails.size());
  EXPECT_EQ(tails.columns[5], "probability");
  for (std::size_t i = 0; i < tails.rows.size(); ++i)
    EXPECT_EQ(tails.rows[i][5], result.tails[i].probability);
  EXPECT_EQ(read_hdf5_table((dir / "out" / "ldp.h5").string(), "statistics").rows.size(),
            2u * 1500u);
  std::filesystem::remove_all(dir);
}

TEST(LdpStudy, BadStudySectionsGiveExitCodeTwo) {
  const auto dir = fresh_directory("ldp_bad");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[ldp]\nns = []\nreplicas = 10\ndeltas = [0.1]\n", "ldp.ns: must not be empty"},
      {"[ldp]\nns = [4]\nreplicas = 1\ndeltas = [0.1]\n", "ldp.replicas: must be at least 2"},
      {"[ldp]\nns = [4]\nreplicas = 10\ndeltas = [0.2, 0.1]\n",
       "ldp.deltas: must be strictly increasing"},
      {"[ldp]\nns = [4]\nreplicas = 10\ndeltas = [0.1]\nstatistic = \"median\"\n",
       "ldp.statistic: unknown value"},
  };
  for (const auto& [section, message] : cases) {
    write_file(dir / "bad.toml", gaussian_config(dir / "out", section));
    const auto result = run_cpm("ldp " + (dir / "bad.toml").string());
    EXPECT_EQ(result.exit_code, 2) << section;
    EXPECT_NE(result.standard_error.find(message), std::string::npos) << result.standard_error;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  }
  std::filesystem::remove_all(dir);
}

TEST(LdpStudy, TwoMpiRanksGiveTheSameResultsAsOneProcess) {
  const auto dir = fresh_directory("ldp_mpi");
  write_file(
      dir / "single.toml",
      gaussian_config(dir / "single", "[ldp]\nns = [3, 6]\nreplicas = 21\ndeltas = [0.1, 0.3]\n"));
  write_file(
      dir / "ranks.toml",
      gaussian_config(dir / "ranks", "[ldp]\nns = [3, 6]\nreplicas = 21\ndeltas = [0.1, 0.3]\n"));
  ASSERT_EQ(run_cpm("ldp --quiet " + (dir / "single.toml").string()).exit_code, 0);
  ASSERT_EQ(testing::run_cpm_mpi(2, "ldp --quiet " + (dir / "ranks.toml").string()).exit_code, 0);
  EXPECT_EQ(testing::read_file(dir / "single" / "ldp_statistics.csv"),
            testing::read_file(dir / "ranks" / "ldp_statistics.csv"));
  EXPECT_EQ(testing::read_file(dir / "single" / "ldp_tails.csv"),
            testing::read_file(dir / "ranks" / "ldp_tails.csv"));
  EXPECT_GT(testing::read_file(dir / "single" / "ldp_statistics.csv").size(), 500u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
