// A clean stop of the studies made of many runs: SIGTERM stops `cpm features` inside the gas of
// features under way (not after it) and a recall study inside the training run under way; each
// keeps what it finished (replicas.checkpoint, the recall journal), names the command that
// continues and exits with 128 + 15; the restart writes the tables an uninterrupted study writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "tests/stopped_command.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::stop_line;
using testing::stopped_by_sigterm;
using testing::write_file;

// A table without its wall-time column, the only one that differs between two runs.
std::string without_seconds(const std::filesystem::path& file) {
  return testing::table_without(file, {"seconds"});
}

// Two i.i.d. sets and two gases of a few seconds each (100 L-BFGS iterations, N = 2,048, d = 16).
std::string features_config(const std::filesystem::path& out) {
  return "[study]\ndims = [16]\nn = [2048]\nseeds = 2\nmethods = [\"iid\", \"coulomb\"]\n"
         "[points]\ncount = 64\nselection_count = 32\n[coulomb]\ntolerance = 1e-7\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

TEST(StudyStop, SigtermInsideAGasStopsTheFeaturesStudyAndTheRestartWritesTheSameTable) {
  const auto dir = fresh_directory("stop_features");
  write_file(dir / "f.toml", features_config(dir / "stopped"));
  // The first i.i.d. set is done: the first gas is under way.
  const std::string err = stopped_by_sigterm("features", dir / "f.toml", "N=2048 iid");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (dir / "stopped" / "replicas.checkpoint").string();
  EXPECT_NE(
      stop_line(err).find("1 of 4 sets saved in " + checkpoint + "; continue with: cpm features " +
                          (dir / "f.toml").string() + " --output " + (dir / "stopped").string() +
                          " --restart " + checkpoint),
      std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / "summary.csv"));

  const auto continued =
      run_cpm("features " + (dir / "f.toml").string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));  // a finished study keeps no checkpoint
  const auto whole = run_cpm("features " + (dir / "f.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  const std::string table = without_seconds(dir / "whole" / "approximation.csv");
  EXPECT_EQ(without_seconds(dir / "stopped" / "approximation.csv"), table);
  EXPECT_NE(table.find("coulomb,"), std::string::npos);
}

TEST(StudyStop, AFeaturesCheckpointOfAnotherConfigurationIsRefusedInOneLine) {
  const auto dir = fresh_directory("stop_features_foreign");
  write_file(dir / "f.toml", features_config(dir / "out"));
  write_file(dir / "replicas.checkpoint",
             "cpm replica checkpoint 1\nstudy features\nfingerprint 1\ntable 4 8\n");
  const auto r = run_cpm("features " + (dir / "f.toml").string() + " --quiet --restart " +
                         (dir / "replicas.checkpoint").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("the replicas of another study"), std::string::npos)
      << r.standard_error;
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

// Four retrieval runs of about a second each (20,000 steps).
std::string recall_config(const std::filesystem::path& out) {
  return "[data]\ndataset = \"associative_retrieval\"\npairs = [4]\ntrain_examples = 256\n"
         "validation_examples = 32\ntest_examples = 32\n[model]\nd_model = 16\nfeatures = [8]\n"
         "[training]\nsteps = 20000\nbatch_size = 16\neval_every = 2000\n"
         "[experiment]\nvariants = [\"softmax\", \"vanilla-favor\"]\nseeds = [1, 2]\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

// The data rows of a table.
int rows(const std::string& table) {
  return static_cast<int>(std::count(table.begin(), table.end(), '\n')) - 1;
}

TEST(StudyStop, SigtermInsideATrainingRunStopsARecallStudyAndTheRestartWritesTheSameTables) {
  const auto dir = fresh_directory("stop_recall");
  write_file(dir / "r.toml", recall_config(dir / "stopped"));
  const std::string err = stopped_by_sigterm("train", dir / "r.toml", "softmax S=4 seed 2");
  ASSERT_FALSE(err.empty());
  EXPECT_NE(
      stop_line(err).find("continue with: cpm train " + (dir / "r.toml").string() + " --output " +
                          (dir / "stopped").string() + " --restart " + (dir / "stopped").string()),
      std::string::npos)
      << err;
  const int finished = rows(read_file(dir / "stopped" / "capacity.csv"));
  EXPECT_GE(finished, 1);  // the first run, recorded as it finished
  EXPECT_LT(finished, 4);
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / "summary.md"));

  const auto continued = run_cpm("train " + (dir / "r.toml").string() + " --quiet --restart " +
                                 (dir / "stopped").string());
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  const auto whole = run_cpm("train " + (dir / "r.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  EXPECT_EQ(read_file(dir / "stopped" / "summary.md"), read_file(dir / "whole" / "summary.md"));
  EXPECT_EQ(without_seconds(dir / "stopped" / "capacity.csv"),
            without_seconds(dir / "whole" / "capacity.csv"));
  EXPECT_EQ(rows(read_file(dir / "whole" / "capacity.csv")), 4);
}

}  // namespace
}  // namespace cpm
