#include "experiments/features/feature_study.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "experiments/features/approximation_points.hpp"
#include "experiments/features/feature_report.hpp"
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

}  // namespace

std::vector<ApproximationRecord> run_feature_study(const FeaturesStudyConfig& config,
                                                   const CommandOptions& options) {
  const ApproximationPoints point_sets(config);  // reads the images before anything is written
  prepare_output_directory(config.output_directory, options.overwrite);
  const std::string dir = config.output_directory + "/";
  ApproximationCsv csv(dir + "approximation.csv", spectral_law_name(config.law));

  // The work of one generated set, for the progress line: N·d, times N for the gas.
  double total = 0.0;
  auto work = [&](FeatureMethod m, Eigen::Index n, int d) {
    return m == FeatureMethod::coulomb ? static_cast<double>(n) * n * d * 1e-3
                                       : static_cast<double>(n) * d;
  };
  for (int d : config.dims)
    for (Eigen::Index n : config.ns)
      for (FeatureMethod m : config.methods)
        total += work(m, n, d) * config.seeds *
                 (m == FeatureMethod::coulomb ? coulomb_candidates(config, d).size() : 1);
  Progress progress("features", total, options.progress);
  double done = 0.0;

  std::vector<ApproximationRecord> records;
  for (int d : config.dims) {
    const Eigen::MatrixXd points = point_sets.points(d, false);
    const Eigen::MatrixXd selection = point_sets.points(d, true);
    for (Eigen::Index n : config.ns)
      for (int seed = 0; seed < config.seeds; ++seed)
        for (FeatureMethod method : config.methods) {
          std::vector<InteractionKernel> kernels = {InteractionKernel::none()};
          if (method == FeatureMethod::coulomb) kernels = coulomb_candidates(config, d);
          for (const InteractionKernel& kernel : kernels) {
            FeatureRequest request;
            request.method = method;
            request.n = n;
            request.dim = d;
            request.sigma = config.sigma;
            request.law = config.law;
            request.seed = config.seed;
            request.replica = static_cast<std::uint64_t>(seed);
            request.repulsion = config.repulsion;
            request.repulsion.kernel = kernel;
            FeatureDiagnostics diagnostics;
            const auto start = std::chrono::steady_clock::now();
            const Eigen::MatrixXd omega = generate_features(request, &diagnostics);
            ApproximationRecord r;
            r.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            r.method = method;
            r.exponent = method == FeatureMethod::coulomb
                             ? riesz_exponent(kernel)
                             : std::numeric_limits<double>::quiet_NaN();
            r.dim = d;
            r.n = n;
            r.seed = seed;
            r.evaluation = kernel_errors(points, omega, config.sigma, config.law);
            r.selection_frobenius =
                kernel_errors(selection, omega, config.sigma, config.law).frobenius;
            // The Cauchy law of the Laplace kernel has no mean: no energy distance.
            r.energy_distance = config.law == SpectralLaw::gaussian
                                    ? energy_distance_to_gaussian(omega, config.sigma)
                                    : std::numeric_limits<double>::quiet_NaN();
            r.iterations = diagnostics.iterations;
            r.converged = diagnostics.converged;
            csv.add(r);
            records.push_back(r);
            done += work(method, n, d);
            std::ostringstream detail;
            detail << "d=" << d << " N=" << n << " " << feature_method_name(method);
            progress.update(done, detail.str());
          }
        }
  }
  progress.finish();
  write_feature_report(config, records);
  return records;
}

}  // namespace cpm
