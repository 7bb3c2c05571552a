#pragma once
// `cpm features`: every generator of frequencies/feature_generator.hpp against the Gaussian kernel,
// over dimensions d, feature counts N and seeds (docs/features.md §4). Writes into the output
// folder approximation.csv (one row per generated set, streamed as the study runs), then the
// summary tables, the fitted rates, features.h5 and approximation.png (feature_report.hpp).
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "config/features_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/frequencies/kernel_approximation.hpp"

namespace cpm {

// One generated set of frequencies and how well it does.
struct ApproximationRecord {
  FeatureMethod method = FeatureMethod::iid;
  double exponent = 0.0;  // coulomb: the Riesz exponent s (0: log); NaN for the other methods
  int dim = 0;
  Eigen::Index n = 0;
  int seed = 0;                          // 0..seeds−1
  KernelApproximationErrors evaluation;  // on the reported points
  double selection_frobenius = 0.0;      // on the selection points
  double energy_distance = 0.0;          // of μ_N to p
  double seconds = 0.0;                  // to generate the frequencies
  int iterations = 0;                    // coulomb: minimiser iterations or Langevin steps
  bool converged = true;
};

std::vector<ApproximationRecord> run_feature_study(const FeaturesStudyConfig& config,
                                                   const CommandOptions& options);

}  // namespace cpm
