#pragma once
// The recall study's record of finished runs, which is also its table: capacity.csv (one row per
// run, written as each finishes: the arm, its grid point — bandwidth τ and Phase A target — the
// test and validation figures, the effective bandwidth, the capacity diagnostic, the arm's
// normalisation ([model] normalise_keys), and `selected`,
// filled in when the study ends) and predictions.csv (the run's per-example right/wrong string,
// which the paired tests need). A stopped study is continued from them (`cpm recall --restart`).
#include <fstream>
#include <string>
#include <vector>

#include "experiments/recall/recall_run.hpp"

namespace cpm {

class RecallJournal {
 public:
  // Starts the two files of `directory` afresh with the `earlier` runs (a restart's), then
  // appends every run added.
  RecallJournal(const std::string& directory, const std::vector<RecallRun>& earlier);
  void add(const RecallRun& run);

 private:
  std::ofstream table_, predictions_;
};

// Rewrites capacity.csv of `directory` with every run, their `selected` marks filled in.
void write_recall_table(const std::string& directory, const std::vector<RecallRun>& runs);

// The runs recorded in `directory` (a run without its predictions line is dropped: the study
// stopped between the two); `older`: the normalisation of the linear arms' runs in a record
// written before the normalisation column (the one [model] normalise_keys of that study; softmax
// and uniform read none). Throws InputError naming the file and line of a corrupt record.
std::vector<RecallRun> read_recall_journal(const std::string& directory,
                                           RecallNormalisation older = RecallNormalisation::none);

}  // namespace cpm
