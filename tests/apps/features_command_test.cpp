// `cpm features` end to end at a tiny size: the tables, the HDF5 file and the figure, and bad
// input that stops with exit code 2 before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string tiny(const std::filesystem::path& out) {
  return "[study]\ndims = [2, 3]\nn = [8, 32]\nseeds = 2\n"
         "[points]\ncount = 24\nselection_count = 16\n"
         "[coulomb]\ns = [-1.0]\nnewtonian = true\ntolerance = 1e-4\n"
         "[output]\ndirectory = \"" +
         out.string() + "\"\n";
}

TEST(FeaturesCommand, WritesTheApproximationTableSummaryRatesAndFigure) {
  const auto dir = fresh_directory("features_study");
  write_file(dir / "f.toml", tiny(dir / "out"));
  const auto r = run_cpm("features --quiet " + (dir / "f.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read_file(dir / "out" / "approximation.csv");
  EXPECT_EQ(table.rfind("method,setting,kernel,dim,n,seed,frobenius,max_entry,spectral,", 0), 0u);
  std::istringstream lines(table);
  int rows = -1;
  for (std::string line; std::getline(lines, line);) ++rows;
  // 2 dims · 2 N · 2 seeds · (4 fixed methods + 2 coulomb settings: s = −1 and d − 2 ≠ −1).
  EXPECT_EQ(rows, 2 * 2 * 2 * 6);
  EXPECT_NE(table.find("coulomb,log,gaussian,2,"), std::string::npos);
  EXPECT_NE(table.find("coulomb,s=1,gaussian,3,"), std::string::npos);
  const std::string summary = read_file(dir / "out" / "summary.csv");
  EXPECT_NE(summary.find("iid,,gaussian,3,32,2,"), std::string::npos);
  EXPECT_NE(read_file(dir / "out" / "rates.csv").find("sobol,gaussian,2,"), std::string::npos);
  EXPECT_NE(read_file(dir / "out" / "summary.md").find("## d = 3"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "features.h5"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "approximation.gp"));
}

TEST(FeaturesCommand, BadInputStopsWithOneLineAndExitCodeTwo) {
  const auto dir = fresh_directory("features_bad");
  write_file(dir / "g.toml", "[study]\nmethods = [\"lattice\"]\n[output]\ndirectory = \"" +
                                 (dir / "out").string() + "\"\n");
  for (const char* file : {"g.toml", "missing.toml"}) {
    const auto r = run_cpm("features " + (dir / file).string());
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_EQ(std::count(r.standard_error.begin(), r.standard_error.end(), '\n'), 1)
        << r.standard_error;
  }
  EXPECT_NE(run_cpm("features " + (dir / "g.toml").string())
                .standard_error.find("study.methods: unknown method 'lattice'"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace cpm
