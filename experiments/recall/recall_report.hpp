#pragma once
// The report of the recall study: summary.md and capacity.png, from the selected grid point of
// every arm (experiments/recall/recall_selection.hpp); the other points appear in the table of
// validated settings.
#include <string>
#include <vector>

#include "experiments/recall/recall_run.hpp"

namespace cpm {

// summary.md: the validity gate (softmax − uniform at each size; below kValidityGate the size
// cannot separate feature maps); the validated settings of every scale-sensitive or kernel arm
// (the grid of mean validation accuracies and the point chosen, with its effective bandwidth);
// test accuracy and loss (mean ± std over seeds); each arm's capacity (the largest size whose
// mean accuracy is at least kCapacityAccuracy); the capacity diagnostic; and paired tests of
// every learned-particle arm against the fixed maps of the same D_φ budget, then, per
// normalisation, D_φ and size, the best learned-particle arm against the best other map, both
// chosen by mean validation accuracy and compared on test. An arm with a
// normalisation is named with it ("kernel-favor [l2]"); paired tests pair arms of one
// normalisation.
inline constexpr double kValidityGate = 0.30;
inline constexpr double kCapacityAccuracy = 0.90;
void write_recall_summary(const std::string& path, const std::vector<RecallRun>& runs);

// Accuracy against size, one line per arm, error bars ± one standard deviation over seeds.
void draw_recall_figure(const std::string& png, const std::vector<RecallRun>& runs);

}  // namespace cpm
