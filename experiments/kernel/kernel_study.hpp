#pragma once
// `cpm kernel`: for every label-noise level, seed and feature budget N, build the features of
// each method — fixed i.i.d. Gaussian, fixed block-orthogonal, importance-sampled (Sinha &
// Duchi, 2016), learned without repulsion (λ = 0) and learned Coulomb particles — fit a linear
// classifier on them and evaluate it on held-out data.
#include <cstdint>
#include <string>
#include <vector>

#include "learning/classification_metrics.hpp"
#include "experiments/kernel/kernel_learning.hpp"
#include "config/kernel_config.hpp"

namespace cpm {

struct KernelRunResult {
  double label_noise = 0.0;
  std::uint64_t seed = 0;
  Eigen::Index n = 0;
  std::string method;
  ClassificationMetrics test;
  double alignment = 0.0;  // A(Ω) on the training set
  PairwiseDistanceSummary distances;
  double seconds = 0.0;  // building the features and fitting the classifier
};

struct KernelStudyOptions {
  bool overwrite = false;
  bool progress = true;
};

// Runs the study and writes into config.output_directory:
//   results.csv      one row per (label noise, seed, N, method)
//   diagnostics.csv  alignment and pairwise distances through training (learned methods)
//   summary.csv, summary.md, accuracy_vs_n.png (see kernel_report.hpp)
std::vector<KernelRunResult> run_kernel_study(const KernelConfig& config,
                                              const KernelStudyOptions& options);

}  // namespace cpm
