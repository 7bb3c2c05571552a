// A clean stop of the studies made of many runs: SIGTERM stops `cpm features` inside the gas of
// features under way (not after it), a recall study inside the training run under way and
// `cpm kernel` inside a learning run; each keeps what it finished (replicas.checkpoint, the recall
// journal), names the command that continues and exits with 128 + 15; the restart writes the
// tables an uninterrupted study writes (for `cpm kernel`, rebuilding learned's choice for
// learned-null and the importance pool from what it needs). A checkpoint of another study or
// configuration, or a damaged one, is refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>

#include "io/text_file.hpp"
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
  const std::string err = stopped_by_sigterm("recall", dir / "r.toml", "softmax S=4 seed 2");
  ASSERT_FALSE(err.empty());
  EXPECT_NE(
      stop_line(err).find("continue with: cpm recall " + (dir / "r.toml").string() + " --output " +
                          (dir / "stopped").string() + " --restart " + (dir / "stopped").string()),
      std::string::npos)
      << err;
  const int finished = rows(read_file(dir / "stopped" / "capacity.csv"));
  EXPECT_GE(finished, 1);  // the first run, recorded as it finished
  EXPECT_LT(finished, 4);
  EXPECT_FALSE(std::filesystem::exists(dir / "stopped" / "summary.md"));

  const auto continued = run_cpm("recall " + (dir / "r.toml").string() + " --quiet --restart " +
                                 (dir / "stopped").string());
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  const auto whole = run_cpm("recall " + (dir / "r.toml").string() + " --quiet --output " +
                             (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  EXPECT_EQ(read_file(dir / "stopped" / "summary.md"), read_file(dir / "whole" / "summary.md"));
  EXPECT_EQ(without_seconds(dir / "stopped" / "capacity.csv"),
            without_seconds(dir / "whole" / "capacity.csv"));
  EXPECT_EQ(rows(read_file(dir / "whole" / "capacity.csv")), 4);
}

// Two seeds × (learned, iid, importance, learned-null) at N = 8 on a synthetic task: 8 runs.
// learned learns for 20,000 Langevin steps at each of two β, learned-null for the 10,000 or 20,000
// steps learned chose (a few tenths of a second); the fixed features take a millisecond.
std::string kernel_config(const std::filesystem::path& out) {
  return "[data]\ntask = \"radial\"\ndim = 3\ntrain_size = 200\ntest_size = 200\n"
         "[features]\nn = [8]\n"
         "[dynamics]\nsteps = 20000\nstep = 0.05\nradius = 5.0\nrecord_every = 2000\n"
         "[repulsion]\nlambda = 0.01\n"
         "[selection]\nbeta = [3.0, 10.0]\nl2 = [1e-3, 1e-2]\ncheckpoints = [10000, 20000]\n"
         "[baselines]\nmethods = [\"learned\", \"iid\", \"importance\", \"learned-null\"]\n"
         "pool = 64\n"
         "[run]\nseeds = 2\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

TEST(KernelStop, SigtermInsideALearningRunStopsTheStudyAndTheRestartWritesTheSameTables) {
  const auto dir = fresh_directory("stop_kernel");
  const auto toml = dir / "k.toml", stopped = dir / "stopped";
  write_file(toml, kernel_config(stopped));
  // The first seed's learned run is done; its learned-null run follows within milliseconds.
  const std::string err = stopped_by_sigterm("kernel", toml, "N=8 learned acc=");
  ASSERT_FALSE(err.empty());
  const std::string checkpoint = (stopped / "replicas.checkpoint").string();
  const std::string line = stop_line(err);
  ASSERT_NE(line.find(" of 8 runs saved in " + checkpoint + "; continue with: cpm kernel " +
                      toml.string() + " --output " + stopped.string() + " --restart " + checkpoint),
            std::string::npos)
      << err;
  const int saved = std::atoi(line.c_str() + std::string("cpm: stopped by SIGTERM; ").size());
  EXPECT_GE(saved, 1) << err;
  EXPECT_LT(saved, 8) << err;
  EXPECT_EQ(rows(read_file(stopped / "results.csv")), saved);  // each run as it finished
  EXPECT_TRUE(std::filesystem::exists(checkpoint));
  EXPECT_FALSE(std::filesystem::exists(stopped / "summary.csv"));

  const auto continued = run_cpm("kernel " + toml.string() + " --quiet --restart " + checkpoint);
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_FALSE(std::filesystem::exists(checkpoint));  // a finished study keeps no checkpoint
  const auto whole =
      run_cpm("kernel " + toml.string() + " --quiet --output " + (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.standard_error;
  EXPECT_EQ(rows(read_file(dir / "whole" / "results.csv")), 8);
  for (const char* table : {"results.csv", "selection.csv", "learning_curve.csv", "diagnostics.csv",
                            "norms.csv", "summary.csv", "retained.csv"})
    EXPECT_EQ(without_seconds(stopped / table), without_seconds(dir / "whole" / table)) << table;
}

// Another study's checkpoint, one of another configuration of this study, and one of this
// configuration whose record is damaged: each refused in one line before anything is written.
TEST(KernelStop, AForeignOrDamagedCheckpointIsRefusedInOneLine) {
  const auto dir = fresh_directory("stop_kernel_foreign");
  const auto toml = dir / "k.toml";
  write_file(toml, kernel_config(dir / "out"));
  const std::string own = std::to_string(text_fingerprint(read_file(toml)));
  const std::pair<std::string, std::string> cases[] = {
      {"study features\nfingerprint " + own + "\ntable 8 0\n", "the replicas of another study"},
      {"study kernel\nfingerprint 1\ntable 8 0\n", "the replicas of another study"},
      {"study kernel\nfingerprint " + own + "\ntable 8 0\n0 0x1p+0\n",
       "not a readable replica checkpoint (run 0: "}};
  for (const auto& [body, message] : cases) {
    write_file(dir / "replicas.checkpoint", "cpm replica checkpoint 1\n" + body);
    const auto r = run_cpm("kernel " + toml.string() + " --quiet --restart " +
                           (dir / "replicas.checkpoint").string());
    EXPECT_EQ(r.exit_code, 2) << body;
    EXPECT_EQ(std::count(r.standard_error.begin(), r.standard_error.end(), '\n'), 1)
        << r.standard_error;
    EXPECT_NE(r.standard_error.find(message), std::string::npos) << r.standard_error;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  }
}

}  // namespace
}  // namespace cpm
