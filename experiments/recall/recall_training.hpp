#pragma once
// Training one arm of the recall study (docs/model.md §2, "Recall tasks"): Adam(W) with the
// configured schedule, clipping and rate drop, validation every eval_every steps, Phase A for the
// kernel arms, and the test split scored at the state with the best validation accuracy.
#include <cstdint>
#include <string>
#include <vector>

#include "config/recall_config.hpp"
#include "experiments/recall/recall_run.hpp"

namespace cpm {

struct RecallTrainingOptions {
  bool progress = true;
  // A start other than the arm's initialisation: the parameters of a trained network of the same
  // task, size and seed (the softmax teacher of an @softmax arm); null: none.
  const std::vector<float>* start = nullptr;
  // Receives the parameters of the best validated state when non-null.
  std::vector<float>* trained = nullptr;
  // Completes "stopped by SIGTERM; " when a signal stops training (core/stop_request.hpp).
  std::string how_to_continue;
};

// Trains one arm on one size and seed (size_index into the task's lists); feature_budget is the
// configured D_φ (ignored by maps of a fixed size).
RecallRun run_recall_arm(const RecallConfig& config, const RecallVariant& variant,
                         int feature_budget, const RecallArmSetting& setting, int size_index,
                         std::uint64_t seed, const RecallTrainingOptions& options = {});

}  // namespace cpm
