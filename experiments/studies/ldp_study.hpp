#pragma once
// Large deviations and concentration (`cpm ldp`): many independent replicas of the stationary
// particle system at several N and β; for a statistic T of each replica, the empirical tail
// P(T > δ) over a δ grid and the empirical rate −(1/N) log P(T > δ), with confidence bands.
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/studies/replica_ensemble.hpp"

namespace cpm {

// One row per (β, N, δ).
struct TailEstimate {
  double beta;
  int n;
  double delta;
  int exceedances, replicas;
  double probability, probability_low, probability_high;  // Wilson score interval
  double rate, rate_low, rate_high;                       // −(1/N) log P and its band
  double theory_rate;        // closed form where known (statistic mean, quadratic V), else NaN
  double exact_probability;  // the same at finite N, else NaN
};

struct LdpResult {
  std::vector<TailEstimate> tails;
  // statistics[i][r]: T of replica r in block i = (β index) · |ns| + (N index).
  std::vector<std::vector<double>> statistics;
};

// Runs every replica (spread over MPI ranks when launched with mpirun); on rank 0 returns the
// result and writes <output>/ldp_tails.csv, ldp_statistics.csv and the plots; other ranks return
// an empty result.
// SIGINT/SIGTERM stop it cleanly with the finished replicas saved, and `options.restart` continues
// from them (ReplicaRecovery in experiments/studies/replica_ensemble.hpp).
LdpResult run_ldp_study(const MpiEnvironment& mpi, const LdpConfig& config,
                        const CommandOptions& options);

// Wilson score interval for k successes in n trials at normal quantile z.
void wilson_interval(int k, int n, double z, double& low, double& high);

// W1 between the empirical measure of `samples` and N(0, σ²), exactly (1D).
double wasserstein1_to_normal(std::vector<double> samples, double sigma);

}  // namespace cpm
