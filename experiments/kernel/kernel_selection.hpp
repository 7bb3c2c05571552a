#pragma once
// Model selection for `cpm kernel` on held-out training rows: for one (label noise, seed) data
// set, one feature method and one budget N, choose the hyper-parameters on the validation rows
// and only then evaluate on the test rows.
//
//  * Fixed features (iid, orthogonal, importance): the classifier's l2 from [selection] l2.
//  * Learned features: one learning run per (γ, β) of the grid (β = ∞ for learned-beta-inf),
//    each scored at the [selection] checkpoints (early stopping) with the classifier at the
//    reference l2 (the middle of the l2 grid); the best (γ, β, step) then gets its l2 from the
//    grid, as the fixed features do. learned-null reruns learned's choice on permuted labels.
//  * Criterion: validation accuracy, ties broken by validation log loss.
//  * After the choice: test metrics, ECE before and after temperature scaling (temperature
//    fitted on the validation rows), and diagnostics (|ω|, effective rank of the features,
//    alignment on fit vs validation rows, accuracy at every checkpoint of the chosen run).
// The test rows are read only after the choice; nothing chosen depends on them
// (tests/experiments/kernel/kernel_selection_test.cpp poisons them with NaN).
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/kernel_config.hpp"
#include "experiments/kernel/kernel_learning.hpp"
#include "learning/classification_metrics.hpp"
#include "learning/labelled_data.hpp"

namespace cpm {

// One (label noise, seed): the training rows split into fit and validation rows, and the test
// rows, with the alignment targets of the fit rows.
struct KernelRunData {
  LabelledData fit, validation, test;
  int classes = 2;
  std::shared_ptr<const Eigen::MatrixXd> fit_x;
  Eigen::MatrixXd fit_targets;                // uncentred (the alignment potential centres)
  Eigen::MatrixXd scored_fit_targets;         // as the alignment sees them (centred if set)
  Eigen::MatrixXd scored_validation_targets;  // the same for the validation rows
};
KernelRunData prepare_run_data(const KernelConfig& config, const DataSplit& split,
                               std::uint64_t seed);

// The importance-sampling pool of a (noise, seed), scored on the fit rows, shared by every N.
struct ImportancePool {
  Eigen::MatrixXd candidates;
  FeatureMap map{FeatureMapKind::rff};
  std::vector<Eigen::Index> order;  // the draws from the χ²-constrained weights
};
ImportancePool make_importance_pool(const KernelConfig& config, const KernelRunData& data,
                                    std::uint64_t seed);

struct SelectionPoint {  // one validation score
  double gamma = 0.0, beta = 0.0;
  int step = 0;
  double l2 = 0.0;
  double accuracy = 0.0, log_loss = 0.0;
};

struct CheckpointScore {  // the chosen run at each checkpoint, chosen l2
  int step = 0;
  double validation_accuracy = 0.0, test_accuracy = 0.0;
};

struct MethodOutcome {
  std::string method;
  Eigen::Index n = 0;
  // The choice (γ, β, steps: NaN/0 for fixed features).
  double gamma = 0.0, beta = 0.0;
  int steps = 0;
  double l2 = 0.0;
  LearningReport learning;  // of the chosen run
  ClassificationMetrics validation, test, test_calibrated;
  double temperature = 1.0;                                // fitted on the validation rows
  double alignment_fit = 0.0, alignment_validation = 0.0;  // A(Ω), targets as scored
  double effective_rank = 0.0;                             // of the centred fit-row feature matrix
  PairwiseDistanceSummary distances;
  Eigen::VectorXd norms;  // |ω_k|
  std::vector<SelectionPoint> grid;
  std::vector<CheckpointScore> curve;
  std::vector<TrainingRecord> trace;  // of the chosen run
  double seconds = 0.0;
};

struct MethodContext {
  const KernelConfig* config = nullptr;
  const KernelRunData* data = nullptr;
  std::uint64_t seed = 1;
  const ImportancePool* pool = nullptr;    // for importance
  const MethodOutcome* learned = nullptr;  // for learned-null: learned's outcome at the same N
  std::function<void(const std::string&)> on_progress;  // optional
};

MethodOutcome evaluate_method(const MethodContext& context, const std::string& method,
                              Eigen::Index n);

}  // namespace cpm
