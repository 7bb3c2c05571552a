#pragma once
// Every arm of the recall study chooses its grid point on validation data, never on the test
// split: for each arm (variant, normalisation, D_φ budget) and size, the point (bandwidth τ,
// Phase A target, learning rate) with the best mean validation accuracy over the seeds is marked
// selected (ties: the lower mean validation loss, then the smaller τ, the target's name, the
// smaller rate). Only points run for every seed the arm has at that size compete, so a study
// stopped part-way does not choose a half-run point.
#include <vector>

#include "experiments/recall/recall_run.hpp"

namespace cpm {

void select_recall_settings(std::vector<RecallRun>& runs);

}  // namespace cpm
