#include "experiments/frequencies/feature_study.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "experiments/frequencies/approximation_points.hpp"
#include "experiments/frequencies/feature_report.hpp"
#include "experiments/studies/replica_ensemble.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"

namespace cpm {

namespace {

class ApproximationCsv {
 public:
  ApproximationCsv(const std::string& path, std::string kernel)
      : path_(path), kernel_(std::move(kernel)), out_(path) {
    out_ << "method,setting,kernel,dim,n,seed,frobenius,max_entry,spectral,selection_frobenius,"
            "energy_distance,seconds,iterations,converged\n"
         << std::setprecision(10);
    check();
  }
  void add(const ApproximationRecord& r) {
    out_ << feature_method_name(r.method) << ',' << setting_name(r) << ',' << kernel_ << ','
         << r.dim << ',' << r.n << ',' << r.seed << ',' << r.evaluation.frobenius << ','
         << r.evaluation.max_entry << ',' << r.evaluation.spectral << ',' << r.selection_frobenius
         << ',' << r.energy_distance << ',' << r.seconds << ',' << r.iterations << ','
         << (r.converged ? 1 : 0) << '\n';
    out_.flush();
    check();
  }

 private:
  void check() {
    if (!out_) throw std::runtime_error(path_ + ": cannot write the table (disk full?)");
  }
  std::string path_, kernel_;
  std::ofstream out_;
};

// One generated set of the study, in the order of the loops: d, N, seed, method, exponent.
struct PlannedSet {
  FeatureMethod method;
  InteractionKernel kernel;
  int dim;
  Eigen::Index n;
  int seed;
};

std::vector<PlannedSet> plan_sets(const FeaturesStudyConfig& config) {
  std::vector<PlannedSet> plan;
  for (int d : config.dims)
    for (Eigen::Index n : config.ns)
      for (int seed = 0; seed < config.seeds; ++seed)
        for (FeatureMethod method : config.methods) {
          std::vector<InteractionKernel> kernels = {InteractionKernel::none()};
          if (method == FeatureMethod::coulomb) kernels = coulomb_candidates(config, d);
          for (const InteractionKernel& kernel : kernels)
            plan.push_back({method, kernel, d, n, seed});
        }
  return plan;
}

// The measured values of a record, as the replica checkpoint keeps them (exactly), and back.
constexpr int kRecordWidth = 8;
std::vector<double> record_values(const ApproximationRecord& r) {
  return {r.evaluation.frobenius,
          r.evaluation.max_entry,
          r.evaluation.spectral,
          r.selection_frobenius,
          r.energy_distance,
          r.seconds,
          static_cast<double>(r.iterations),
          r.converged ? 1.0 : 0.0};
}

ApproximationRecord planned_record(const PlannedSet& p) {
  ApproximationRecord r;
  r.method = p.method;
  r.exponent = p.method == FeatureMethod::coulomb ? riesz_exponent(p.kernel)
                                                  : std::numeric_limits<double>::quiet_NaN();
  r.dim = p.dim;
  r.n = p.n;
  r.seed = p.seed;
  return r;
}

ApproximationRecord recorded(const PlannedSet& p, const std::vector<double>& v) {
  ApproximationRecord r = planned_record(p);
  r.evaluation = {v[0], v[1], v[2]};
  r.selection_frobenius = v[3];
  r.energy_distance = v[4];
  r.seconds = v[5];
  r.iterations = static_cast<int>(v[6]);
  r.converged = v[7] != 0.0;
  return r;
}

// Generates the set `p` and measures it on the reported and the selection points.
ApproximationRecord measure(const FeaturesStudyConfig& config, const PlannedSet& p,
                            const Eigen::MatrixXd& points, const Eigen::MatrixXd& selection) {
  FeatureRequest request;
  request.method = p.method;
  request.n = p.n;
  request.dim = p.dim;
  request.sigma = config.sigma;
  request.law = config.law;
  request.seed = config.seed;
  request.replica = static_cast<std::uint64_t>(p.seed);
  request.repulsion = config.repulsion;
  request.repulsion.kernel = p.kernel;
  FeatureDiagnostics diagnostics;
  const auto start = std::chrono::steady_clock::now();
  const Eigen::MatrixXd omega = generate_features(request, &diagnostics);
  ApproximationRecord r = planned_record(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.evaluation = kernel_errors(points, omega, config.sigma, config.law);
  r.selection_frobenius = kernel_errors(selection, omega, config.sigma, config.law).frobenius;
  // The Cauchy law of the Laplace kernel has no mean: no energy distance.
  r.energy_distance = config.law == SpectralLaw::gaussian
                          ? energy_distance_to_gaussian(omega, config.sigma)
                          : std::numeric_limits<double>::quiet_NaN();
  r.iterations = diagnostics.iterations;
  r.converged = diagnostics.converged;
  return r;
}

// The work of one generated set, for the progress line: N·d, times N for the gas.
double work(const PlannedSet& p) {
  const double nd = static_cast<double>(p.n) * p.dim;
  return p.method == FeatureMethod::coulomb ? nd * static_cast<double>(p.n) * 1e-3 : nd;
}

}  // namespace

std::vector<ApproximationRecord> run_feature_study(const FeaturesStudyConfig& config,
                                                   const CommandOptions& options) {
  const ApproximationPoints point_sets(config);  // reads the images before anything is written
  const ReplicaRecovery recovery{"features", config.source, config.output_directory,
                                 options.restart, "sets"};
  const std::vector<PlannedSet> plan = plan_sets(config);
  const int count = static_cast<int>(plan.size());
  ReplicaCheckpoint finished = finished_replicas(recovery, count, kRecordWidth);
  prepare_output_directory(config.output_directory,
                           options.overwrite || continues_in_place(recovery));
  const std::string dir = config.output_directory + "/";
  ApproximationCsv csv(dir + "approximation.csv", spectral_law_name(config.law));

  double total = 0.0;
  for (const PlannedSet& p : plan) total += work(p);
  Progress progress("features", total, options.progress);
  double done = 0.0;

  const StopRequestHandler stop_handler;
  std::vector<ApproximationRecord> records;
  Eigen::MatrixXd points, selection;
  for (int i = 0; i < count; ++i) {
    const PlannedSet& p = plan[i];
    if (i == 0 || p.dim != plan[i - 1].dim) {
      points = point_sets.points(p.dim, false);
      selection = point_sets.points(p.dim, true);
    }
    const auto saved = finished.rows.find(i);
    if (saved != finished.rows.end()) {
      records.push_back(recorded(p, saved->second));
    } else {
      try {
        stop_if_requested();
        records.push_back(measure(config, p, points, selection));
      } catch (const StopRequested& stop) {  // between sets or inside the gas
        progress.interrupt();
        throw save_finished_replicas(stop.signal(), recovery, std::move(finished));
      }
      finished.rows[i] = record_values(records.back());
    }
    csv.add(records.back());
    done += work(p);
    std::ostringstream detail;
    detail << "d=" << p.dim << " N=" << p.n << " " << feature_method_name(p.method);
    progress.update(done, detail.str());
  }
  progress.finish();
  write_feature_report(config, records);
  discard_finished_replicas(recovery);
  return records;
}

}  // namespace cpm
