#pragma once
// The tables of the paired protocol (experiments/attention/paired_protocol.hpp): paired.md (kernel
// against vanilla per map, the controls, Phase A per head, each with its paired statistics),
// paired_runs.csv (every arm, seed and condition) and phase_a_runs.csv (every Phase A head).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "experiments/attention/attention_evaluation.hpp"
#include "experiments/attention/attention_phase_a.hpp"

namespace cpm {

struct ArmResult {
  std::string arm;  // kernel-<map>, vanilla-<map>, softmax, uniform
  // FNV-1a hash of the parameters and particles the arm held right after loading its checkpoint.
  std::uint64_t start_digest = 0;
  std::int64_t pretrain_steps = 0;  // gradient steps before the checkpoint
  std::int64_t steps = 0;           // gradient steps after it
  double train_seconds = 0.0;       // training time after the checkpoint (steps only)
  double phase_a_seconds = 0.0;     // wall time of Phase A (kernel arms)
  std::vector<HeadAlignment> phase_a;
  std::vector<EvaluationCondition> evaluation;
};

// One arm of one seed on one data set.
struct ArmRecord {
  std::string dataset;
  std::uint64_t seed = 0;
  std::string map;  // the kernel-<map> variant's map; empty for the controls
  ArmResult result;
};

// Writes paired.md, paired_runs.csv and phase_a_runs.csv into `root`; `labels` holds each data
// set's evaluation labels (McNemar pairs the arms' per-example correctness).
void write_paired_report(const std::string& root, const std::vector<ArmRecord>& records,
                         const std::map<std::string, std::vector<int>>& labels,
                         const std::vector<std::string>& datasets,
                         const std::vector<std::string>& maps,
                         const std::vector<std::string>& controls, const TrainConfig& config);

}  // namespace cpm
