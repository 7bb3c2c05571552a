// The recall study's record: a run written and read back gives the same figures (the capacity
// diagnostic's length CV and effective temperature among them), and a record of the build before
// those two columns still reads, with both not measured (NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiments/recall/recall_journal.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

RecallRun a_run() {
  RecallRun r;
  r.variant = "kernel-favor";
  r.feature_budget = r.feature_dim = 128;
  r.setting = {0.5, AlignmentTarget::softmax, 1e-3};
  r.seed = 2;
  r.size = r.pairs = 80;
  r.accuracy = 0.625;
  r.capacity.norm_spread = 2.75;
  r.capacity.norm_cv = 1.25;
  r.capacity.effective_temperature = 3.5;
  r.capacity.sequences = 10;
  r.correct = {true, false, true};
  return r;
}

TEST(RecallJournal, ARunReadsBackWithItsLengthDiagnostics) {
  const std::string dir = testing_support::fresh_path("journal_round_trip");
  std::filesystem::create_directories(dir);
  { RecallJournal(dir, {}).add(a_run()); }
  const std::vector<RecallRun> runs = read_recall_journal(dir);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].capacity.norm_cv, 1.25);
  EXPECT_EQ(runs[0].capacity.effective_temperature, 3.5);
  EXPECT_EQ(runs[0].capacity.norm_spread, 2.75);
  EXPECT_EQ(runs[0].correct, a_run().correct);
}

TEST(RecallJournal, ARecordWithoutTheLengthColumnsStillReads) {
  const std::string dir = testing_support::fresh_path("journal_older");
  std::filesystem::create_directories(dir);
  { RecallJournal(dir, {}).add(a_run()); }
  // Drop norm_cv and effective_temperature, the two columns before the last, from the header and
  // the row: the record of the build before.
  std::ifstream in(dir + "/capacity.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  in.close();
  auto without_two = [](const std::string& line) {
    const std::size_t last = line.rfind(',');
    const std::size_t third = line.rfind(',', line.rfind(',', last - 1) - 1);
    return line.substr(0, third) + line.substr(last);
  };
  std::ofstream(dir + "/capacity.csv") << without_two(header) << '\n' << without_two(row) << '\n';
  const std::vector<RecallRun> runs = read_recall_journal(dir);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(std::isnan(runs[0].capacity.norm_cv));
  EXPECT_TRUE(std::isnan(runs[0].capacity.effective_temperature));
  EXPECT_EQ(runs[0].capacity.norm_spread, 2.75);
  EXPECT_EQ(runs[0].accuracy, 0.625);
}

}  // namespace
}  // namespace cpm
