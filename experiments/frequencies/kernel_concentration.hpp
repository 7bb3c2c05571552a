#pragma once
// Concentration of the random-feature kernel (`cpm concentration`;
// docs/features.md §5): many replicas of N frequencies from each ensemble — i.i.d. draws from p
// and the compensated gas at finite β, with β fixed or β_N = b·N — and for each the relative
// Frobenius error f of the Gram matrix on fixed points. Per ensemble, N and δ: the tail
// P(f > δ) with its Wilson band, the empirical rates at speed N and N², and McDiarmid's bound for
// i.i.d. features; per ensemble the measured speeds (KernelSpeed) with bootstrap intervals.
#include <string>
#include <vector>

#include "config/features_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/studies/replica_ensemble.hpp"

namespace cpm {

// One ensemble of frequency sets.
struct FeatureEnsemble {
  FeatureMethod method = FeatureMethod::iid;
  double beta = 0.0;          // coulomb: β, or b of β_N = b·N
  bool per_particle = false;  // β_N = b·N
  std::string label() const;  // "iid", "coulomb beta=4", "coulomb beta=0.5N"
  double beta_at(Eigen::Index n) const { return per_particle ? beta * n : beta; }
};

// The configured ensembles: iid, then the gas at each fixed β, then at each b.
std::vector<FeatureEnsemble> feature_ensembles(const KernelConcentrationConfig& config);

struct KernelTail {
  int ensemble = 0;  // index into feature_ensembles
  Eigen::Index n = 0;
  double delta = 0.0;
  int exceedances = 0, replicas = 0;
  double probability = 0.0, probability_low = 0.0, probability_high = 0.0;
  double rate = 0.0, rate_squared = 0.0;  // −(1/N) log P and −(1/N²) log P
  double bound = 0.0;                     // i.i.d.: McDiarmid's bound on P; NaN otherwise
};

// The speed of an ensemble, measured two ways: `tail` at a fixed δ (the slope of log(−log P)
// against log N, over the N with 0 < P < 1; NaN below two), and `variance` (δ NaN), the slope of
// −log Var f against log N — the speed at the scale of typical fluctuations, 1 for i.i.d.
// features, free of the drift of the mean that steepens the fixed-δ slopes at small N.
struct KernelSpeed {
  int ensemble = 0;
  std::string statistic = "tail";  // tail | variance
  double delta = 0.0;
  int points = 0;
  double speed = 0.0, speed_low = 0.0, speed_high = 0.0;
};

struct KernelConcentrationResult {
  std::vector<FeatureEnsemble> ensembles;
  // errors[e][i][r]: f of replica r for ensemble e at N = ns[i].
  std::vector<std::vector<std::vector<double>>> errors;
  std::vector<KernelTail> tails;
  std::vector<KernelSpeed> speeds;
  // experiments/frequencies/iid_kernel_tails
  double mcdiarmid_factor = 0.0, scaled_mean_square = 0.0;
};

// Runs every replica (over MPI ranks and threads; each replica's frequencies depend on the seed
// and its index only); on rank 0 returns the result and writes the tables and figures
// (kernel_concentration_report.hpp); other ranks return an empty result. Stops cleanly on
// SIGINT/SIGTERM and continues from `options.restart` as `cpm ldp` does.
KernelConcentrationResult run_kernel_concentration(const MpiEnvironment& mpi,
                                                   const KernelConcentrationConfig& config,
                                                   const CommandOptions& options);

// Tails and speeds of result.errors (the study's analysis, on rank 0); `points` are the Gram
// matrix's, for McDiarmid's bound.
void analyse_kernel_tails(const KernelConcentrationConfig& config, const Eigen::MatrixXd& points,
                          KernelConcentrationResult& result);

}  // namespace cpm
