#pragma once
// Convergence studies N → ∞ (`cpm converge`): for each particle number N, R independent replicas
// of the particle system run from ρ_0 and are compared at every output time with ONE grid
// solution ρ_t of the McKean–Vlasov PDE (solved once). Reports mean, standard deviation and
// standard error of each distance, fits the rate d ~ N^slope at the final time with a bootstrap
// interval, and measures the i.i.d. sampling floor: the same distances for N independent draws
// from ρ_T (docs/exact_solutions.md §4), below which a noisy particle system cannot go.
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/studies/rate_fit.hpp"
#include "experiments/studies/replica_ensemble.hpp"

namespace cpm {

struct MetricSummary {
  double mean = 0, std = 0, standard_error = 0;
};

struct ConvergenceResult {
  std::vector<double> times;
  // summary[n][time][metric] over the replicas; floor[n][metric] likewise at the final time.
  std::vector<std::vector<std::vector<MetricSummary>>> summary;
  std::vector<std::vector<MetricSummary>> floor;
  std::vector<RateFit> rates;        // per metric, final time
  std::vector<RateFit> floor_rates;  // per metric, the i.i.d. floor
};

// Runs the study (replicas spread over MPI ranks); rank 0 writes convergence.csv,
// convergence.h5, convergence_rates.csv and convergence.png into the output folder and returns
// the result, other ranks return an empty result.
// SIGINT/SIGTERM stop it cleanly with the finished replicas saved, and `options.restart` continues
// from them (ReplicaRecovery in experiments/studies/replica_ensemble.hpp).
ConvergenceResult run_convergence_study(const MpiEnvironment& mpi, const ConvergenceConfig& config,
                                        const CommandOptions& options);

}  // namespace cpm
