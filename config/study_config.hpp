#pragma once
// The configurations of the studies over many particle numbers: `cpm converge` (particles
// against the grid solution as N grows) and `cpm ldp` (tails of a statistic over replicas). Each
// is a run configuration without particles.n plus the study's own section.
#include <string>
#include <vector>

#include "config/run_config.hpp"

namespace cpm {

// The distances of a convergence study between the particles and the grid density.
enum class ConvergenceDistance { w1, w2, sw2, mmd, l1, energy };
const std::vector<std::string>& names(ConvergenceDistance);  // "w1", "w2", "sw2", "mmd", "l1", …

struct ConvergenceConfig {
  RunConfig model;  // needs a [grid] section; dynamics.outputs sets the comparison times
  std::vector<int> ns;
  int replicas = 16;
  // Any of w1, w2 (d = 1), sw2, mmd (O(N²) per evaluation), l1, energy (|E_N − E_grid| for the
  // external plus interaction terms). Default: w1 w2 l1 energy in 1D, sw2 mmd l1 energy otherwise.
  std::vector<ConvergenceDistance> metrics;
  int bootstrap = 1000;
  double confidence = 0.95;
};

ConvergenceConfig parse_convergence_config(const std::string& toml_text, const std::string& source);
ConvergenceConfig load_convergence_config(const std::string& path);

enum class LdpStatistic { mean, energy, w1 };
const std::vector<std::string>& names(LdpStatistic);  // "mean", "energy", "w1"

struct LdpConfig {
  RunConfig model;  // dynamics.t_end is the burn-in time to stationarity
  std::vector<int> ns;
  std::vector<double> betas;  // defaults to {dynamics.beta}
  int replicas = 1000;
  // mean: |empirical mean| (the potential's minimum is the origin);
  // energy: |E_N − its average over the replicas|;
  // w1: W1 to the stationary Gaussian N(0, 1/(β(a + κ))) (1D Gaussian case only).
  LdpStatistic statistic = LdpStatistic::mean;
  std::vector<double> deltas;
  double confidence = 0.95;
};

LdpConfig parse_ldp_config(const std::string& toml_text, const std::string& source);
LdpConfig load_ldp_config(const std::string& path);

}  // namespace cpm
