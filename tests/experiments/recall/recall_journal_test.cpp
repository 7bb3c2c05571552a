// The recall study's record: a run written and read back gives the same figures (the capacity
// diagnostic's length CV and effective temperature among them, and the normalisation), a record of
// the build before those two columns still reads, with both not measured (NaN), and one before the
// normalisation column with the study's one normalisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// Rewrites the record `path` without the named columns, as an earlier build wrote it.
void drop_columns(const std::string& path, const std::vector<std::string>& columns) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) rows.back().push_back(f);
    if (line.back() == ',') rows.back().emplace_back();
  }
  in.close();
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < rows[0].size(); ++i)
    if (std::find(columns.begin(), columns.end(), rows[0][i]) == columns.end()) kept.push_back(i);
  std::ofstream out(path);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < kept.size(); ++i) out << (i ? "," : "") << row[kept[i]];
    out << '\n';
  }
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
  // The record of the build before norm_cv and effective_temperature (and the normalisation).
  drop_columns(dir + "/capacity.csv", {"norm_cv", "effective_temperature", "normalisation"});
  drop_columns(dir + "/predictions.csv", {"normalisation"});
  const std::vector<RecallRun> runs = read_recall_journal(dir);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(std::isnan(runs[0].capacity.norm_cv));
  EXPECT_TRUE(std::isnan(runs[0].capacity.effective_temperature));
  EXPECT_EQ(runs[0].capacity.norm_spread, 2.75);
  EXPECT_EQ(runs[0].accuracy, 0.625);
}

// Every run records its normalisation; a record written before the normalisation column reads
// with the normalisation the restart names for it (the study's one normalise_keys, none by
// default), its runs keyed as the study now plans them.
TEST(RecallJournal, NormalisationsReadBackAndOlderRecordsTakeTheStudysOne) {
  const std::string dir = testing_support::fresh_path("journal_normalisation");
  std::filesystem::create_directories(dir);
  RecallRun l1 = a_run();
  l1.normalisation = RecallNormalisation::l1;
  {
    RecallJournal journal(dir, {});
    journal.add(a_run());
    journal.add(l1);
  }
  std::vector<RecallRun> runs = read_recall_journal(dir);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].normalisation, RecallNormalisation::none);
  EXPECT_EQ(runs[1].normalisation, RecallNormalisation::l1);
  EXPECT_NE(recall_run_key(runs[0]), recall_run_key(runs[1]));
  EXPECT_EQ(runs[1].capacity.norm_cv, 1.25);
  // The record of the build before: no normalisation column in either file.
  { RecallJournal(dir, {}).add(a_run()); }
  drop_columns(dir + "/capacity.csv", {"normalisation"});
  drop_columns(dir + "/predictions.csv", {"normalisation"});
  runs = read_recall_journal(dir);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].normalisation, RecallNormalisation::none);
  EXPECT_EQ(runs[0].correct, a_run().correct);
  EXPECT_EQ(runs[0].capacity.norm_cv, 1.25);
  runs = read_recall_journal(dir, RecallNormalisation::l2);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].normalisation, RecallNormalisation::l2);
}

}  // namespace
}  // namespace cpm
