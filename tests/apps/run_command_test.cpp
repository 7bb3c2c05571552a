// `cpm run` on good and bad input: bad input stops with exit code 2 and one line naming the key
// (or file) and the reason, before anything is written.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::run_cpm;
using testing::write_file;

const char* kGoodConfig = R"([particles]
n = 20
seed = 3
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
std = 0.5
[dynamics]
beta = 100.0
step = 1e-3
t_end = 0.01
outputs = 2
)";

std::string with_output(const std::string& config, const std::filesystem::path& out) {
  return config + "[output]\ndirectory = \"" + out.string() + "\"\n";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Runs a bad config; expects exit 2, a single line mentioning `needle`, and no output folder.
void expect_rejected(const std::string& name, const std::string& config,
                     const std::string& needle) {
  const auto dir = fresh_directory(name);
  const auto out = dir / "out";
  write_file(dir / "bad.toml", with_output(config, out));
  const auto result = run_cpm("run " + (dir / "bad.toml").string());
  EXPECT_EQ(result.exit_code, 2) << name << ": " << result.standard_error;
  EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1)
      << name << ": " << result.standard_error;
  EXPECT_NE(result.standard_error.find(needle), std::string::npos)
      << name << ": " << result.standard_error;
  EXPECT_FALSE(std::filesystem::exists(out)) << name;
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, GoodConfigWritesObservablesAndSnapshots) {
  const auto dir = fresh_directory("good");
  write_file(dir / "run.toml", with_output(kGoodConfig, dir / "out"));
  const auto result = run_cpm("run " + (dir / "run.toml").string());
  EXPECT_EQ(result.exit_code, 0) << result.standard_error;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "observables.csv"));
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, BadConfigsGiveExitCodeTwoAndOneLineNamingTheKey) {
  expect_rejected("unknown_key", replace(kGoodConfig, "seed = 3", "seed = 3\ncolour = 1"),
                  "particles.colour: unknown key");
  expect_rejected("unknown_section", std::string(kGoodConfig) + "[extra]\nx = 1\n",
                  "extra: unknown key");
  expect_rejected("wrong_type", replace(kGoodConfig, "n = 20", "n = \"twenty\""),
                  "particles.n: expected an integer");
  expect_rejected("n_zero", replace(kGoodConfig, "n = 20", "n = 0"),
                  "particles.n: must be at least 1");
  expect_rejected("s_out_of_range", replace(kGoodConfig, "s = 1.0", "s = 2.5"),
                  "interaction.s: must satisfy -2 < s < d");
  expect_rejected("beta_zero", replace(kGoodConfig, "beta = 100.0", "beta = 0.0"),
                  "dynamics.beta: must be positive");
  expect_rejected("beta_negative", replace(kGoodConfig, "beta = 100.0", "beta = -1.0"),
                  "dynamics.beta: must be positive");
  expect_rejected("negative_radius", replace(kGoodConfig, "radius = 2.0", "radius = -2.0"),
                  "domain.radius: must be positive");
  expect_rejected("unknown_kernel",
                  replace(kGoodConfig, "kernel = \"riesz\"", "kernel = \"yukawa\""),
                  "interaction.kernel: unknown value 'yukawa'");
  expect_rejected("invalid_toml", replace(kGoodConfig, "n = 20", "n = = 20"), "invalid TOML");
}

TEST(RunCommand, MissingConfigFileIsNamedWithExitCodeTwo) {
  const auto result = run_cpm("run /nonexistent/cpm.toml");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.standard_error.find("/nonexistent/cpm.toml: cannot open"), std::string::npos);
}

TEST(RunCommand, EarlierResultsAreNotOverwrittenWithoutTheFlag) {
  const auto dir = fresh_directory("no_overwrite");
  write_file(dir / "run.toml", with_output(kGoodConfig, dir / "out"));
  std::filesystem::create_directories(dir / "out");
  write_file(dir / "out" / "observables.csv", "earlier results\n");
  const auto refused = run_cpm("run " + (dir / "run.toml").string());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.standard_error.find("--overwrite"), std::string::npos);
  std::ifstream in(dir / "out" / "observables.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "earlier results");
  EXPECT_EQ(run_cpm("run --overwrite " + (dir / "run.toml").string()).exit_code, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpm
