#pragma once
// The outputs of the recall study: capacity.csv (a row per run, written as runs finish),
// summary.md and capacity.png.
#include <fstream>
#include <string>
#include <vector>

#include "experiments/recall/recall_study.hpp"

namespace cpm {

// Columns: task, variant, feature_dim, seed, size, pairs, accuracy, loss, validation_accuracy,
// best_step, seconds, phase_a_kl_before, phase_a_kl_after (kernel- arms; 0 otherwise).
class RecallTable {
 public:
  explicit RecallTable(const std::string& path);
  void add(const RecallRun& run);

 private:
  std::string path_;
  std::ofstream out_;
};

// The mean ± std over seeds of accuracy and loss of every arm (variant and D_φ) at every size,
// the validity gate (softmax − uniform at each size; below kValidityGate the size cannot separate
// feature maps) and each arm's capacity: the largest size whose mean accuracy is at least
// kCapacityAccuracy.
inline constexpr double kValidityGate = 0.30;
inline constexpr double kCapacityAccuracy = 0.90;
void write_recall_summary(const std::string& path, const std::vector<RecallRun>& runs);

// Accuracy against size, one line per arm, error bars ± one standard deviation over seeds.
void draw_recall_figure(const std::string& png, const std::vector<RecallRun>& runs);

}  // namespace cpm
