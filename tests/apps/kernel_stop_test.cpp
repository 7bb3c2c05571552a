// A clean stop of `cpm kernel`: SIGTERM after the first learned run stops the study inside the
// learning run under way, keeps every finished run in replicas.checkpoint, names the command that
// continues and exits with 128 + 15; the restart (which rebuilds learned's choice for
// learned-null and the importance pool from what it needs) writes the tables an uninterrupted
// study writes. A checkpoint of another study or configuration, or a damaged one, is refused in
// one line.
#include <gtest/gtest.h>

#include <algorithm>
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

int rows(const std::string& table) {
  return static_cast<int>(std::count(table.begin(), table.end(), '\n')) - 1;
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
