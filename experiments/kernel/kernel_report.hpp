#pragma once
// Tables and plots of a `cpm kernel` study: mean ± standard deviation over seeds per
// (label noise, method, N), the fraction of the N = 256 accuracy retained at N = 64, and a PNG
// of accuracy against N per method (gnuplot, headless).
#include <string>
#include <vector>

#include "config/kernel_config.hpp"
#include "experiments/kernel/kernel_study.hpp"

namespace cpm {

struct MeanStd {
  double mean = 0.0, std = 0.0;  // sample standard deviation (n − 1); 0 for a single value
};
MeanStd mean_std(const std::vector<double>& values);

struct KernelSummaryRow {
  double label_noise = 0.0;
  std::string method;
  Eigen::Index n = 0;
  int runs = 0;
  MeanStd accuracy, log_loss, brier, ece, alignment, min_distance;
  MeanStd ece_calibrated, alignment_validation, effective_rank, mean_norm, validation_accuracy;
  MeanStd lambda, repulsion_ratio_initial, repulsion_ratio_final;
  std::string choices;  // the distinct chosen (γ, β, steps, l2) over seeds
};

std::vector<KernelSummaryRow> summarise_kernel_results(const std::vector<KernelRunResult>& results);

// acc(N = small) / acc(N = large) per seed, then mean ± std over seeds; runs = 0 if the sweep
// lacks either budget.
MeanStd retained_accuracy(const std::vector<KernelRunResult>& results, double label_noise,
                          const std::string& method, Eigen::Index small, Eigen::Index large);

// summary.csv, retained.csv, summary.md, accuracy_vs_n.png and diagnostics.png (|ω|
// histograms, effective rank, alignment on fit vs held-out rows, accuracy against the learning
// step; figures need gnuplot, otherwise a warning on stderr) in config.output_directory.
void write_kernel_report(const KernelConfig& config, const std::vector<KernelRunResult>& results);

}  // namespace cpm
