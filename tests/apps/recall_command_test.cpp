// `cpm train` on the recall tasks end to end at a tiny size: the tables and the figure, and bad
// input that stops with exit code 2 before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string tiny(const std::string& data, const std::string& variants,
                 const std::filesystem::path& out) {
  std::ostringstream c;
  c << "[data]\n"
    << data << "train_examples = 256\nvalidation_examples = 32\ntest_examples = 32\n"
    << "[model]\nd_model = 16\nfeatures = [8]\n"
    << "[training]\nsteps = 40\nbatch_size = 16\neval_every = 20\n"
    << "[experiment]\nvariants = [" << variants << "]\nseeds = [1]\n"
    << "[output]\ndirectory = \"" << out.string() << "\"\n";
  return c.str();
}

TEST(RecallCommand, RetrievalWritesTheCapacityTableSummaryAndFigure) {
  const auto dir = fresh_directory("recall_retrieval");
  write_file(dir / "r.toml",
             tiny("dataset = \"associative_retrieval\"\npairs = [4, 8]\n",
                  "\"softmax\", \"uniform\", \"vanilla-favor\", \"trainable-favor\", \"dpfp1\"",
                  dir / "out"));
  const auto r = run_cpm("train " + (dir / "r.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read_file(dir / "out" / "capacity.csv");
  EXPECT_EQ(table.rfind("task,variant,feature_dim,seed,size,pairs,accuracy,loss,", 0), 0u);
  std::istringstream lines(table);
  int rows = -1;
  for (std::string line; std::getline(lines, line);) ++rows;
  EXPECT_EQ(rows, 2 * 5);  // two sizes, five arms, one seed
  EXPECT_NE(table.find("associative_retrieval,vanilla-favor,8,1,4,4,"), std::string::npos);
  EXPECT_NE(table.find("associative_retrieval,dpfp1,32,1,8,8,"), std::string::npos);  // 2·1·16
  const std::string summary = read_file(dir / "out" / "summary.md");
  EXPECT_NE(summary.find("Validity gate"), std::string::npos);
  EXPECT_NE(summary.find("Capacity"), std::string::npos);
}

TEST(RecallCommand, MqarTrainsTheCausalDecoder) {
  const auto dir = fresh_directory("recall_mqar");
  write_file(dir / "m.toml",
             tiny("dataset = \"mqar\"\nlengths = [16]\npairs = [2]\nvocabulary = 64\n",
                  "\"softmax\", \"vanilla-softmaxfeat\", \"elu\"", dir / "out"));
  const auto r = run_cpm("train " + (dir / "m.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read_file(dir / "out" / "capacity.csv");
  EXPECT_NE(table.find("mqar,softmax,0,1,16,2,"), std::string::npos);
  EXPECT_NE(table.find("mqar,elu,16,1,16,2,"), std::string::npos);  // D_φ = d_head
}

TEST(RecallCommand, BadInputStopsWithExitCodeTwoAndWritesNothing) {
  const auto dir = fresh_directory("recall_bad");
  const auto out = dir / "out";
  write_file(dir / "odd.toml",
             tiny("dataset = \"mqar\"\nlengths = [15]\npairs = [2]\n", "\"softmax\"", out));
  write_file(dir / "arm.toml",
             tiny("dataset = \"associative_retrieval\"\npairs = [4]\n", "\"kernel-rff\"", out));
  write_file(dir / "big.toml", tiny("dataset = \"associative_retrieval\"\npairs = [4]\n"
                                    "key_symbols = 3\n",
                                    "\"softmax\"", out));
  for (const char* name : {"odd.toml", "arm.toml", "big.toml"}) {
    const auto r = run_cpm("train " + (dir / name).string());
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.standard_error.find('\n'), r.standard_error.size() - 1) << r.standard_error;
    EXPECT_FALSE(std::filesystem::exists(out)) << name;
  }
}

TEST(RecallCommand, OutputAndQuietFlagsRedirectAndSilence) {
  const auto dir = fresh_directory("recall_flags");
  write_file(dir / "r.toml", tiny("dataset = \"associative_retrieval\"\npairs = [4]\n",
                                  "\"softmax\", \"kernel-favor\"", dir / "configured"));
  const auto r = run_cpm("train " + (dir / "r.toml").string() + " --quiet --output " +
                         (dir / "moved").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  EXPECT_TRUE(std::filesystem::exists(dir / "moved" / "capacity.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "configured"));
  EXPECT_EQ(r.standard_error.find("elapsed"), std::string::npos) << r.standard_error;
  // The folder exists now: a second run needs --overwrite.
  EXPECT_EQ(run_cpm("train " + (dir / "r.toml").string() + " --quiet --output " +
                    (dir / "moved").string())
                .exit_code,
            2);
  EXPECT_EQ(run_cpm("train " + (dir / "r.toml").string() + " --quiet --overwrite --output " +
                    (dir / "moved").string())
                .exit_code,
            0);
}

}  // namespace
}  // namespace cpm
