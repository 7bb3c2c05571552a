#pragma once
// The paired protocol of `cpm train` ([experiment] protocol = "paired"; docs/model.md §2): the
// learned kernel against the same network continued with its random features, from one checkpoint.
//
// For each data set, seed and kernel-<map> variant:
//   1. vanilla-<map> is trained from the seed's initialisation for E = phase_a.warmup_epochs
//      epochs (epoch orders 0 .. E−1) and saved to checkpoint.h5;
//   2. vanilla arm: the checkpoint is loaded and trained for E′ = training.epochs epochs (epoch
//      orders E .. E+E′−1, a fresh AdamW and warm-up/cosine schedule over E′ epochs);
//   3. kernel arm: the same checkpoint is loaded, Phase A moves the particles (on the trained
//      queries and keys, see [phase_a]), then the same E′ epochs as the vanilla arm: same batches,
//      same dropout masks, same number of gradient steps.
// The controls softmax and uniform (φ ≡ 1, the mean of the values) take stages 1 and 2 with their
// own attention. Each arm is evaluated clean and under word dropout and adjacent swaps; per
// (data set, map) the kernel and vanilla arms are compared by McNemar's exact test on the
// per-example predictions, paired t tests over seeds and a two-level bootstrap interval
// (learning/paired_statistics.hpp).
//
// Output (in output.directory): paired.md (the tables), paired_runs.csv (every arm, seed and
// condition), phase_a_runs.csv (every head of every kernel arm), and per run
// <dataset>/seed_<s>/<arm>/ with training_log.csv, metrics.csv, predictions.csv, phase_a.csv.
//
// A clean stop (SIGINT/SIGTERM) ends the training step under way and keeps every finished
// (data set, seed, variant) run, all its arms exactly, in replicas.checkpoint; `--restart` with
// that file trains the run under way again from its start and the others, and writes the tables
// of an uninterrupted experiment.
#include <cstdint>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "experiments/attention/attention_data.hpp"
#include "experiments/attention/attention_evaluation.hpp"
#include "experiments/attention/attention_phase_a.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/attention/paired_report.hpp"

namespace cpm {

struct PairedRun {
  ArmResult vanilla, kernel;
};

// FNV-1a over the bytes of a model's parameters, then its particles.
std::uint64_t model_digest(const TransformerClassifier<float>& model);

// Stages 1–3 for `config.model.variant` (a kernel-<map> variant) and `config.training.seed`, in
// `directory` (checkpoint.h5, pretrain_log.csv, vanilla/, kernel/).
PairedRun run_paired_map(const TrainConfig& config, const AttentionTask& task,
                         const std::string& directory, bool progress);

// Stages 1–2 for a control (`config.model.variant` softmax or uniform).
ArmResult run_control(const TrainConfig& config, const AttentionTask& task,
                      const std::string& directory, bool progress);

// The whole experiment of a paired configuration.
void run_paired_experiment(const TrainConfig& config, const CommandOptions& options);

}  // namespace cpm
