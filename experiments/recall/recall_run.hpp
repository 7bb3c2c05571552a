#pragma once
// One finished run of the recall study: an arm (variant, normalisation, D_φ), a point of its grid,
// a size and a seed, with its test figures at the best validated state.
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/recall/capacity_diagnostic.hpp"
#include "experiments/recall/recall_arms.hpp"

namespace cpm {

struct RecallRun {
  RecallTask task = RecallTask::associative_retrieval;
  std::string variant;
  RecallNormalisation normalisation = RecallNormalisation::none;  // [model] normalise_keys
  int feature_budget = 0;  // the configured D_φ of particle and projected maps (0: a fixed size)
  int feature_dim = 0;     // D_φ, the rows of φ (0: softmax, uniform)
  RecallArmSetting setting;
  std::uint64_t seed = 0;
  int size = 0;                       // S (associative retrieval) or L (MQAR)
  int pairs = 0;                      // S or N
  double accuracy = 0.0, loss = 0.0;  // test split, best validated state
  double validation_accuracy = 0.0, validation_loss = 0.0;
  int best_step = 0;
  double seconds = 0.0;
  // kernel- arms: Phase A's mean KL(p ‖ â) over heads before and after (0 for the other arms).
  double phase_a_kl_before = 0.0, phase_a_kl_after = 0.0;
  // τ times what training did to the scale of φ's input (RetrievalArm::effective_bandwidth).
  double effective_bandwidth = 1.0;
  CapacityDiagnostic capacity;  // associative retrieval, test split (sequences = 0: not measured)
  bool selected = false;        // the grid point the study chose on validation for this arm
  // Per test example (retrieval) or query position (MQAR), in a fixed order: whether the arm's
  // prediction was right. Arms of the same seed and size see the same test set, so these pair.
  std::vector<bool> correct;
};

// What identifies a run: variant, normalisation, D_φ budget, size, grid point and seed.
std::string recall_run_key(const RecallRun& run);

}  // namespace cpm
