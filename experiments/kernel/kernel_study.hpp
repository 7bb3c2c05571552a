#pragma once
// `cpm kernel`: for every label-noise level, seed and feature budget N, build the features of
// each method — fixed i.i.d. Gaussian, fixed block-orthogonal, importance-sampled (Sinha &
// Duchi, 2016), learned without repulsion (λ = 0) and learned Coulomb particles — fit a linear
// classifier on them and evaluate it on held-out data.
#include <cstdint>
#include <string>
#include <vector>

#include "config/kernel_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/kernel/kernel_selection.hpp"

namespace cpm {

// One (label noise, seed, N, method): the choice made on the validation rows and the test
// metrics and diagnostics that follow (kernel_selection.hpp).
struct KernelRunResult : MethodOutcome {
  double label_noise = 0.0;
  std::uint64_t seed = 0;
};

// Runs the study and writes into config.output_directory:
//   results.csv         one row per (label noise, seed, N, method): test metrics, the choice
//                       (γ, β, steps, l2), γ_eff, λ, drift ratios, diagnostics
//   selection.csv       every validation score behind the choices
//   learning_curve.csv  validation and test accuracy at each checkpoint of the chosen run
//   norms.csv           |ω| histograms
//   diagnostics.csv     alignment and pairwise distances through the chosen run
//   summary.csv, summary.md, accuracy_vs_n.png, diagnostics.png (see kernel_report.hpp)
// A clean stop (SIGINT/SIGTERM) ends the Langevin step under way and keeps every finished
// (label noise, seed, N, method) run in replicas.checkpoint (experiments/kernel/
// kernel_run_record.hpp); options.restart names such a file, and the tables then come out as an
// uninterrupted study writes them.
std::vector<KernelRunResult> run_kernel_study(const KernelConfig& config,
                                              const CommandOptions& options);

}  // namespace cpm
