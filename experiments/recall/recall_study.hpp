#pragma once
// The recall study (docs/model.md §2, "Recall tasks"): for every task size, arm, feature dimension
// and seed, a model is trained on the generated task with Adam(W), validated every eval_every
// steps, and the best validated state is scored on the test split. Writes capacity.csv (one row
// per run), summary.md (mean ± std over seeds, the capacity of each arm, the validity gate
// softmax − uniform) and capacity.png (accuracy against size, one line per arm).
#include <cstdint>
#include <string>
#include <vector>

#include "config/recall_config.hpp"

namespace cpm {

struct RecallRun {
  std::string task, variant;
  int feature_dim = 0;  // D_φ, the dimension of φ (0: softmax, uniform)
  std::uint64_t seed = 0;
  int size = 0;                       // S (associative retrieval) or L (MQAR)
  int pairs = 0;                      // S or N
  double accuracy = 0.0, loss = 0.0;  // test split, best validated state
  double validation_accuracy = 0.0;
  int best_step = 0;
  double seconds = 0.0;
  // kernel- arms: Phase A's mean KL(p ‖ â) over heads before and after (0 for the other arms).
  double phase_a_kl_before = 0.0, phase_a_kl_after = 0.0;
  // Per test example (retrieval) or query position (MQAR), in a fixed order: whether the arm's
  // prediction was right. Arms of the same seed and size see the same test set, so these pair.
  std::vector<bool> correct;
};

struct RecallOptions {
  bool overwrite = false;
  bool progress = true;
};

// Trains one arm on one size and seed (size_index into the task's lists).
RecallRun run_recall_arm(const RecallConfig& config, const RecallVariant& variant, int feature_dim,
                         int size_index, std::uint64_t seed, bool progress);

// Every run of the configuration, then the tables and the figure in config.output_directory.
std::vector<RecallRun> run_recall_study(const RecallConfig& config, const RecallOptions& options);

}  // namespace cpm
