// `cpm train`, `cpm eval`, `cpm predict` end to end on a small slice of SST-2, and bad input:
// a malformed data row, d_model not divisible by heads, a checkpoint of another model size.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/command_runner.hpp"
#include "tests/data_sets.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::run_cpm;
using testing::write_file;

std::string small_config(const std::filesystem::path& out, const std::string& attention,
                         int d_model = 16, int warmup_epochs = 0,
                         const std::string& extra_data = "",
                         const std::string& extra_phase_a = "") {
  std::ostringstream c;
  c << "[data]\ndataset = \"sst2\"\nmax_length = 24\ntrain_limit = 256\neval_limit = 64\n"
    << extra_data << "[model]\nd_model = " << d_model
    << "\nheads = 2\nlayers = 1\nd_ff = 32\nfeatures = 8\n"
    << "attention = \"" << attention << "\"\n"
    << "[training]\nepochs = 1\nbatch_size = 32\nwarmup_steps = 2\n"
    << "[phase_a]\nwarmup_epochs = " << warmup_epochs << "\nsequences = 64\n"
    << extra_phase_a << "[phase_a.dynamics]\nsteps = 5\n"
    << "[output]\ndirectory = \"" << out.string() << "\"\n";
  return c.str();
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TrainCommand, TrainsEvaluatesAndPredictsOnSst2Slice) {
  CPM_SKIP_WITHOUT_DATA_SET("sst2");
  const auto dir = fresh_directory("train_ok");
  const auto out = dir / "run";
  write_file(dir / "train.toml", small_config(out, "kernel-favor"));
  const auto r = run_cpm("train " + (dir / "train.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string metrics = read(out / "metrics.csv");
  for (const char* c : {"clean", "word_dropout_10", "word_dropout_20", "adjacent_swaps"})
    EXPECT_NE(metrics.find(c), std::string::npos) << c;
  EXPECT_TRUE(std::filesystem::exists(out / "model.h5"));
  EXPECT_TRUE(std::filesystem::exists(out / "phase_a.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "training_log.csv"));
  EXPECT_EQ(run_cpm("eval " + (dir / "train.toml").string()).exit_code, 0);
  EXPECT_EQ(run_cpm("predict " + (out / "model.h5").string() + " --text 'a moving , funny film'")
                .exit_code,
            0);
  // eval's --output names the training run's folder, as train's does; --quiet leaves the metrics.
  const auto moved = dir / "moved";
  std::filesystem::rename(out, moved);
  EXPECT_NE(run_cpm("eval " + (dir / "train.toml").string()).exit_code, 0);  // no model in out
  const std::string quiet = testing::read_command_output(
      std::string(CPM_BINARY) + " eval " + (dir / "train.toml").string() + " --output " +
      moved.string() + " --quiet");
  EXPECT_EQ(quiet.find(" from "), std::string::npos) << quiet;
  EXPECT_EQ(quiet.rfind("condition", 0), 0u) << quiet;
  EXPECT_NE(quiet.find("clean"), std::string::npos) << quiet;
}

TEST(TrainCommand, PhaseAAfterWarmUpEpochsWorks) {
  CPM_SKIP_WITHOUT_DATA_SET("sst2");
  const auto dir = fresh_directory("train_warmup");
  write_file(dir / "train.toml", small_config(dir / "run", "kernel-porf-softplus", 16, 1));
  const auto r = run_cpm("train " + (dir / "train.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string phase_a = read(dir / "run" / "phase_a.csv");
  for (const char* c : {"alignment_before", "alignment_after", "gamma_effective", "particle_norm",
                        "particle_displacement"})
    EXPECT_NE(phase_a.find(c), std::string::npos) << c;
}

TEST(TrainCommand, BadInputStopsWithExitCodeTwoAndOneLine) {
  // Needs no data set: the data folders it reads are written here.
  const auto dir = fresh_directory("train_bad");
  // A small valid data folder, for the checks that need one.
  std::filesystem::create_directories(dir / "valid");
  std::string rows = "sentence\tlabel\n";
  for (int i = 0; i < 40; ++i)
    rows += std::string(i % 2 ? "a fine warm film " : "a dull cold film ") + std::to_string(i) +
            "\t" + std::to_string(i % 2) + "\n";
  write_file(dir / "valid" / "train.tsv", rows);
  write_file(dir / "valid" / "dev.tsv", rows);
  const std::string valid = "directory = \"" + (dir / "valid").string() + "\"\n";
  // A malformed row on line 3 of the training file.
  std::filesystem::create_directories(dir / "data");
  write_file(dir / "data" / "train.tsv", "sentence\tlabel\ngood\t1\nbad\tmaybe\n");
  write_file(dir / "data" / "dev.tsv", "sentence\tlabel\nfine\t1\n");
  write_file(dir / "malformed.toml",
             small_config(dir / "m", "softmax", 16, 0,
                          "directory = \"" + (dir / "data").string() + "\"\n"));
  auto r = run_cpm("train " + (dir / "malformed.toml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("train.tsv:3: label must be 0 or 1"), std::string::npos)
      << r.standard_error;
  EXPECT_EQ(std::count(r.standard_error.begin(), r.standard_error.end(), '\n'), 1);

  write_file(dir / "heads.toml", small_config(dir / "h", "softmax", 17, 0, valid));
  r = run_cpm("train " + (dir / "heads.toml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("model.heads: d_model = 17 is not divisible by heads = 2"),
            std::string::npos)
      << r.standard_error;

  // A data folder that does not exist: one line that says how to point cpm at the data.
  write_file(dir / "nodata.toml",
             small_config(dir / "n", "softmax", 16, 0,
                          "directory = \"" + (dir / "nowhere").string() + "\"\n"));
  r = run_cpm("train " + (dir / "nodata.toml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("nowhere: data folder not found (set data.directory"),
            std::string::npos)
      << r.standard_error;
  EXPECT_FALSE(std::filesystem::exists(dir / "n"));

  // A checkpoint trained with d_model 16, evaluated with a configuration of d_model 32.
  write_file(dir / "small.toml", small_config(dir / "s", "softmax", 16, 0, valid));
  ASSERT_EQ(run_cpm("train " + (dir / "small.toml").string()).exit_code, 0);
  write_file(dir / "large.toml", small_config(dir / "s", "softmax", 32, 0, valid));
  r = run_cpm("eval " + (dir / "large.toml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.standard_error.find("checkpoint is for another model size: d_model 16 (model 32)"),
            std::string::npos)
      << r.standard_error;
}

TEST(TrainCommand, ExperimentWritesComparisonTableAndChart) {
  CPM_SKIP_WITHOUT_DATA_SET("sst2");
  const auto dir = fresh_directory("train_experiment");
  write_file(dir / "exp.toml",
             small_config(dir / "e", "softmax") +
                 "[experiment]\nvariants = [\"softmax\", \"vanilla-favor\"]\nseeds = [1, 2]\n");
  const auto r = run_cpm("train " + (dir / "exp.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read(dir / "e" / "comparison.md");
  EXPECT_NE(table.find("| softmax | "), std::string::npos) << table;
  EXPECT_NE(table.find("| vanilla-favor | "), std::string::npos) << table;
  EXPECT_NE(table.find(" ± "), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "e" / "comparison.png"));
  EXPECT_TRUE(
      std::filesystem::exists(dir / "e" / "sst2" / "vanilla-favor" / "seed_2" / "model.h5"));
}

TEST(TrainCommand, PairedProtocolWritesThePairedTables) {
  CPM_SKIP_WITHOUT_DATA_SET("sst2");
  const auto dir = fresh_directory("train_paired");
  write_file(dir / "paired.toml",
             small_config(dir / "p", "kernel-favor", 16, 1, "",
                          "align_on = \"queries_and_keys\"\nnormalised = true\n"
                          "tolerance = 0.01\nrepulsion_fraction = 0.2\n") +
                 "[phase_a.interaction]\nkernel = \"mollified\"\ns = 7.0\nepsilon = 0.5\n"
                 "[experiment]\nprotocol = \"paired\"\nvariants = [\"kernel-favor\", "
                 "\"uniform\"]\nseeds = [1, 2]\nbootstrap_samples = 200\n");
  const auto r = run_cpm("train " + (dir / "paired.toml").string());
  ASSERT_EQ(r.exit_code, 0) << r.standard_error;
  const std::string table = read(dir / "p" / "paired.md");
  EXPECT_NE(table.find("| kernel-favor − vanilla-favor | 2 | "), std::string::npos) << table;
  EXPECT_NE(table.find("| vanilla-favor − uniform | 2 | "), std::string::npos) << table;
  EXPECT_NE(table.find("| uniform | "), std::string::npos) << table;
  EXPECT_NE(table.find("linear-fit residual"), std::string::npos) << table;
  for (const char* f :
       {"paired_runs.csv", "phase_a_runs.csv", "sst2/seed_2/favor/kernel/phase_a.csv",
        "sst2/seed_1/favor/vanilla/predictions.csv", "sst2/seed_1/uniform/metrics.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / "p" / f)) << f;
  EXPECT_FALSE(std::filesystem::exists(dir / "p" / "sst2/seed_1/favor/checkpoint.h5"));
}

TEST(TrainCommand, BadPairedProtocolKeysStopWithExitCodeTwoAndOneLine) {
  const auto dir = fresh_directory("train_paired_bad");
  // (keys in [phase_a], text after the configuration, the expected line)
  const std::vector<std::array<std::string, 3>> cases = {
      {"align_on = \"values\"\n", "", "phase_a.align_on: unknown value 'values'"},
      {"tolerance = 2.0\n", "", "phase_a.tolerance: must lie in [0, 1)"},
      {"repulsion_fraction = -0.5\n", "",
       "phase_a.repulsion_fraction: must be a finite number ≥ 0"},
      {"", "[experiment]\nprotocol = \"paired\"\nvariants = [\"vanilla-favor\"]\n",
       "experiment.variants: 'vanilla-favor' is the paired arm of kernel-favor"},
  };
  int k = 0;
  for (const auto& [phase_a, extra, expected] : cases) {
    const auto file = dir / ("bad" + std::to_string(k++) + ".toml");
    write_file(file, small_config(dir / "out", "kernel-favor", 16, 0, "", phase_a) + extra);
    const auto r = run_cpm("train " + file.string());
    EXPECT_EQ(r.exit_code, 2) << extra;
    EXPECT_NE(r.standard_error.find(expected), std::string::npos) << r.standard_error;
    EXPECT_EQ(std::count(r.standard_error.begin(), r.standard_error.end(), '\n'), 1)
        << r.standard_error;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

}  // namespace
}  // namespace cpm
