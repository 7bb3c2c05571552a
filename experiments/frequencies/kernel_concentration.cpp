#include "experiments/frequencies/kernel_concentration.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>

#include "experiments/frequencies/approximation_points.hpp"
#include "experiments/frequencies/iid_kernel_tails.hpp"
#include "experiments/frequencies/kernel_approximation.hpp"
#include "experiments/frequencies/kernel_concentration_report.hpp"
#include "experiments/studies/ldp_study.hpp"
#include "experiments/studies/rate_fit.hpp"
#include "io/number_format.hpp"
#include "io/output_directory.hpp"

namespace cpm {

namespace {

constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();

// How many of the errors exceed δ.
int exceedances(const std::vector<double>& errors, double delta) {
  return static_cast<int>(
      std::count_if(errors.begin(), errors.end(), [delta](double f) { return f > delta; }));
}

// log(−log P̂(f > δ)), P̂ kept inside [1/(2R), 1 − 1/(2R)] so that a resample without (or with
// only) exceedances stays finite.
double log_log_tail(const std::vector<double>& errors, double delta) {
  const double r = static_cast<double>(errors.size());
  const double k = exceedances(errors, delta);
  const double p = std::clamp(k / r, 0.5 / r, 1.0 - 0.5 / r);
  return std::log(-std::log(p));
}

// −log of the sample variance.
double minus_log_variance(const std::vector<double>& f) {
  double mean = 0.0, square = 0.0;
  for (double v : f) mean += v / static_cast<double>(f.size());
  for (double v : f) square += (v - mean) * (v - mean);
  return -std::log(square / static_cast<double>(f.size() - 1));
}

}  // namespace

std::string FeatureEnsemble::label() const {
  if (method == FeatureMethod::iid) return "iid";
  return feature_method_name(method) + " beta=" + format_number(beta, 6) +
         (per_particle ? "N" : "");
}

std::vector<FeatureEnsemble> feature_ensembles(const KernelConcentrationConfig& c) {
  std::vector<FeatureEnsemble> ensembles;
  for (FeatureMethod m : c.methods) {
    if (m != FeatureMethod::coulomb) {
      ensembles.push_back({m, 0.0, false});
      continue;
    }
    for (double beta : c.betas) ensembles.push_back({m, beta, false});
    for (double b : c.betas_per_particle) ensembles.push_back({m, b, true});
  }
  return ensembles;
}

void analyse_kernel_tails(const KernelConcentrationConfig& c, const Eigen::MatrixXd& points,
                          KernelConcentrationResult& result) {
  const boost::math::normal_distribution<double> normal;
  const double z = boost::math::quantile(normal, 0.5 + 0.5 * c.confidence);
  const IidKernelTails iid(points, c.features.sigma);
  result.mcdiarmid_factor = iid.mcdiarmid_factor();
  result.scaled_mean_square = iid.scaled_mean_square();
  result.tails.clear();
  result.speeds.clear();
  for (std::size_t e = 0; e < result.ensembles.size(); ++e) {
    const bool independent = result.ensembles[e].method == FeatureMethod::iid;
    for (std::size_t i = 0; i < c.ns.size(); ++i) {
      const std::vector<double>& f = result.errors[e][i];
      const double n = static_cast<double>(c.ns[i]);
      for (double delta : c.deltas) {
        KernelTail t;
        t.ensemble = static_cast<int>(e);
        t.n = c.ns[i];
        t.delta = delta;
        t.replicas = static_cast<int>(f.size());
        t.exceedances = exceedances(f, delta);
        t.probability = static_cast<double>(t.exceedances) / t.replicas;
        wilson_interval(t.exceedances, t.replicas, z, t.probability_low, t.probability_high);
        const double minus_log = t.probability > 0.0 ? -std::log(t.probability)
                                                     : std::numeric_limits<double>::infinity();
        t.rate = minus_log / n;
        t.rate_squared = minus_log / (n * n);
        t.bound = independent ? iid.tail_bound(n, delta) : kUnmeasured;
        result.tails.push_back(t);
      }
    }
    // The speed at each δ from the N whose tail is neither empty nor certain.
    for (double delta : c.deltas) {
      std::vector<double> ns;
      std::vector<std::vector<double>> samples;
      for (std::size_t i = 0; i < c.ns.size(); ++i) {
        const std::vector<double>& f = result.errors[e][i];
        const int k = exceedances(f, delta);
        if (k == 0 || k == static_cast<int>(f.size())) continue;
        ns.push_back(static_cast<double>(c.ns[i]));
        samples.push_back(f);
      }
      KernelSpeed s{static_cast<int>(e), "tail",      delta,      static_cast<int>(ns.size()),
                    kUnmeasured,         kUnmeasured, kUnmeasured};
      if (ns.size() >= 2) {
        const RateFit fit = fit_log_log(
            ns, samples, [delta](const std::vector<double>& v) { return log_log_tail(v, delta); },
            c.bootstrap, c.confidence, c.features.seed);
        s.speed = fit.slope;
        s.speed_low = fit.slope_low;
        s.speed_high = fit.slope_high;
      }
      result.speeds.push_back(s);
    }
    if (c.ns.size() >= 2) {
      std::vector<double> ns(c.ns.begin(), c.ns.end());
      const RateFit fit = fit_log_log(ns, result.errors[e], minus_log_variance, c.bootstrap,
                                      c.confidence, c.features.seed);
      result.speeds.push_back({static_cast<int>(e), "variance", kUnmeasured,
                               static_cast<int>(ns.size()), fit.slope, fit.slope_low,
                               fit.slope_high});
    }
  }
}

KernelConcentrationResult run_kernel_concentration(const MpiEnvironment& mpi,
                                                   const KernelConcentrationConfig& c,
                                                   const CommandOptions& options) {
  const std::string& directory = c.features.output_directory;
  const ReplicaRecovery recovery{"concentration", c.source, directory, options.restart};
  const int d = c.features.dims.front();
  const Eigen::MatrixXd points = ApproximationPoints(c.features).points(d, false);
  if (mpi.is_root())
    prepare_output_directory(directory, options.overwrite || continues_in_place(recovery));
  KernelConcentrationResult result;
  result.ensembles = feature_ensembles(c);
  const int per_block = c.replicas;
  const int blocks = static_cast<int>(result.ensembles.size() * c.ns.size());
  // Replica id = block · R + r, block = ensemble · |ns| + (N index): its own random streams.
  const Eigen::MatrixXd table = run_replicas(
      mpi, blocks * per_block, 1,
      [&](int id, double* row) {
        const int block = id / per_block;
        const FeatureEnsemble& ensemble = result.ensembles[block / c.ns.size()];
        FeatureRequest request;
        request.method = ensemble.method;
        request.n = c.ns[block % c.ns.size()];
        request.dim = d;
        request.sigma = c.features.sigma;
        request.seed = c.features.seed;
        request.replica = static_cast<std::uint64_t>(id);
        request.repulsion = c.features.repulsion;
        request.repulsion.beta = ensemble.beta_at(request.n);
        row[0] = kernel_errors(points, generate_features(request), c.features.sigma).frobenius;
      },
      options.progress ? "cpm concentration" : "", recovery);
  if (!mpi.is_root()) return {};
  result.errors.assign(result.ensembles.size(), std::vector<std::vector<double>>(c.ns.size()));
  for (int id = 0; id < blocks * per_block; ++id) {
    const int block = id / per_block;
    result.errors[block / c.ns.size()][block % c.ns.size()].push_back(table(id, 0));
  }
  analyse_kernel_tails(c, points, result);
  write_kernel_concentration_report(c, result);
  return result;
}

}  // namespace cpm
