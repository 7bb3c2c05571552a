// `cpm concentration` end to end at a tiny size, and its bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/command_runner.hpp"
#include "tests/stopped_command.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string tiny(const std::filesystem::path& out, const std::string& extra = "",
                 const std::string& ns = "[4, 8]", int replicas = 20) {
  return "[features]\ndim = 2\n" + extra +
         "[points]\ncount = 16\n[coulomb]\nsteps = 50\n"
         "[ldp]\nns = " +
         ns + "\nreplicas = " + std::to_string(replicas) +
         "\nbetas = [1.0]\ndeltas = [0.1, 0.3]\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

TEST(ConcentrationCommand, WritesTheTailsSpeedsAndFigures) {
  const auto dir = fresh_directory("concentration");
  write_file(dir / "k.toml", tiny(dir / "out"));
  const auto r = run_cpm("concentration --quiet " + (dir / "k.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string tails = read_file(dir / "out" / "kernel_tails.csv");
  EXPECT_EQ(tails.rfind("ensemble,n,delta,exceedances,replicas,probability,", 0), 0u);
  EXPECT_EQ(std::count(tails.begin(), tails.end(), '\n'), 1 + 2 * 2 * 2);
  EXPECT_NE(tails.find("\"coulomb beta=1\",8,0.3,"), std::string::npos);
  EXPECT_NE(read_file(dir / "out" / "kernel_speeds.csv").find("\"iid\",tail,0.1,"),
            std::string::npos);
  EXPECT_NE(read_file(dir / "out" / "kernel_speeds.csv").find("\"iid\",variance,"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "kernel_fluctuations.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "kernel_concentration.h5"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "kernel_tails.gp"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "kernel_speed.gp"));
}

// Replicas spread over two MPI ranks give the same files byte for byte.
TEST(ConcentrationCommand, TwoRanksWriteTheSameErrorsAndTailsAsOne) {
  const auto dir = fresh_directory("concentration_mpi");
  write_file(dir / "k.toml", tiny(dir / "one"));
  ASSERT_EQ(run_cpm("concentration --quiet " + (dir / "k.toml").string()).exit_code, 0);
  ASSERT_EQ(testing::run_cpm_mpi(2, "concentration --quiet " + (dir / "k.toml").string() +
                                        " --output " + (dir / "two").string())
                .exit_code,
            0);
  for (const char* file : {"kernel_errors.csv", "kernel_tails.csv", "kernel_speeds.csv"})
    EXPECT_EQ(read_file(dir / "one" / file), read_file(dir / "two" / file)) << file;
}

// SIGTERM a tenth of the way through: exit 143, the finished replicas in a checkpoint and one line
// naming the command that continues; that command writes the uninterrupted study's tables.
TEST(ConcentrationCommand, SigtermStopsTheStudyAndTheRestartWritesTheSameTables) {
  const auto dir = fresh_directory("concentration_stop");
  write_file(dir / "k.toml", tiny(dir / "stopped", "", "[8, 16]", 6000));
  const std::string err =
      testing::stopped_by_sigterm("concentration", dir / "k.toml", "cpm concentration  10%");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "replicas.checkpoint").string();
  const std::string line = testing::stop_line(err);
  EXPECT_NE(line.find("replicas saved in " + checkpoint + "; continue with: cpm concentration"),
            std::string::npos)
      << err;
  EXPECT_NE(line.find("--restart " + checkpoint), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / "kernel_tails.csv"));

  const auto continued =
      run_cpm("concentration --quiet " + (dir / "k.toml").string() + " --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));
  const auto whole = run_cpm("concentration --quiet " + (dir / "k.toml").string() + " --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  for (const char* file : {"kernel_errors.csv", "kernel_tails.csv", "kernel_speeds.csv"}) {
    EXPECT_EQ(read_file(dir / "stopped" / file), read_file(dir / "whole" / file)) << file;
    EXPECT_FALSE(read_file(dir / "whole" / file).empty()) << file;
  }
}

TEST(ConcentrationCommand, BadInputStopsWithOneLineAndExitCodeTwo) {
  const auto dir = fresh_directory("concentration_bad");
  write_file(dir / "k.toml", tiny(dir / "out", "method = \"iid\"\n"));
  const auto r = run_cpm("concentration " + (dir / "k.toml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.standard_error.begin(), r.standard_error.end(), '\n'), 1)
      << r.standard_error;
  EXPECT_NE(r.standard_error.find("features.method"), std::string::npos) << r.standard_error;
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace cpm
