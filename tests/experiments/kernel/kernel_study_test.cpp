// `cpm kernel` end to end through the cpm binary: a small study writes its tables and plot, and
// bad input stops with one line on stderr and exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/idx_reader.hpp"

namespace cpm {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string err;
};

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("cpm_kernel_study_test_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

CommandResult run_kernel(const fs::path& dir, const std::string& config) {
  const fs::path file = dir / "config.toml";
  std::ofstream(file) << config;
  const fs::path err = dir / "stderr.txt";
  const std::string command = std::string(CPM_BINARY) + " kernel " + file.string() +
                              " --quiet > /dev/null 2> " + err.string();
  const int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream s;
  s << std::ifstream(err).rdbuf();
  r.err = s.str();
  return r;
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

std::string small_study(const fs::path& out) {
  return "[data]\ntask = \"radial\"\ndim = 3\ntrain_size = 200\ntest_size = 200\n"
         "label_noise = [0.0, 0.1]\n"
         "[features]\nn = [8, 16]\nscale = 1.0\n"
         "[dynamics]\nsteps = 20\nstep = 0.2\nradius = 5.0\n"
         "[repulsion]\nlambda = 0.01\n"
         "[baselines]\npool = 64\n"
         "[run]\nseeds = 2\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

TEST(KernelStudy, SmallStudyWritesResultsSummaryDiagnosticsAndPlot) {
  const fs::path dir = scratch("small");
  const CommandResult r = run_kernel(dir, small_study(dir / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream results(dir / "out" / "results.csv");
  std::string line;
  int rows = -1;
  while (std::getline(results, line)) ++rows;
  EXPECT_EQ(rows, 2 * 2 * 2 * 5);  // noise levels × seeds × N × methods
  for (const char* name : {"summary.csv", "summary.md", "diagnostics.csv", "retained.csv",
                           "selection.csv", "learning_curve.csv", "norms.csv"})
    EXPECT_TRUE(fs::exists(dir / "out" / name)) << name;
  if (std::system("command -v gnuplot > /dev/null") == 0) {
    EXPECT_GT(fs::file_size(dir / "out" / "accuracy_vs_n.png"), 1000u);
    EXPECT_GT(fs::file_size(dir / "out" / "diagnostics.png"), 1000u);
  }
  // A second run into the same folder is refused without --overwrite.
  const CommandResult again = run_kernel(dir, small_study(dir / "out"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(count_lines(again.err), 1) << again.err;
  fs::remove_all(dir);
}

TEST(KernelStudy, UnknownFeatureMapIsAOneLineErrorWithExitCode2) {
  const fs::path dir = scratch("map");
  const CommandResult r = run_kernel(dir, "[features]\nmap = \"laplace\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("features.map"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(KernelStudy, ImpossibleSelectionGridIsAOneLineErrorAndWritesNothing) {
  const fs::path dir = scratch("grid");
  const CommandResult r =
      run_kernel(dir, "[selection]\ngamma = [1.0, -2.0]\n[output]\ndirectory = \"" +
                          (dir / "out").string() + "\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("selection.gamma"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST(KernelStudy, ZeroFeaturesIsAOneLineErrorWithExitCode2) {
  const fs::path dir = scratch("zero");
  const CommandResult r = run_kernel(dir, "[features]\nn = [0]\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("features.n"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// IDX files whose label count does not match the number of images.
TEST(KernelStudy, LabelsNotMatchingTheDataAreAOneLineErrorWithExitCode2) {
  const fs::path dir = scratch("labels");
  IdxArray images, labels;
  images.shape = {6, 2, 2};
  images.data.assign(24, 7);
  labels.shape = {5};
  labels.data = {0, 1, 0, 1, 0};
  write_idx((dir / "images.gz").string(), images);
  write_idx((dir / "labels.gz").string(), labels);
  const std::string config =
      "[data]\ntask = \"idx\"\ntrain_images = \"" + (dir / "images.gz").string() +
      "\"\ntrain_labels = \"" + (dir / "labels.gz").string() + "\"\ntest_images = \"" +
      (dir / "images.gz").string() + "\"\ntest_labels = \"" + (dir / "labels.gz").string() +
      "\"\n[output]\ndirectory = \"" + (dir / "out").string() + "\"\n";
  const CommandResult r = run_kernel(dir, config);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("labels.gz"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("do not match"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));  // nothing written
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpm
