#include "experiments/kernel/kernel_study.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "experiments/kernel/kernel_datasets.hpp"
#include "experiments/kernel/kernel_report.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"

namespace cpm {

namespace {

// |ω| histogram bins: [0, 3σ√d) in 30 bins, the last one open to the right.
constexpr int kNormBins = 30;

void write_norm_histogram(std::ostream& csv, const KernelRunResult& r, double top) {
  std::vector<int> counts(kNormBins, 0);
  for (Eigen::Index k = 0; k < r.norms.size(); ++k)
    ++counts[std::min(kNormBins - 1, static_cast<int>(r.norms[k] / top * kNormBins))];
  for (int b = 0; b < kNormBins; ++b)
    csv << r.label_noise << ',' << r.seed << ',' << r.n << ',' << r.method << ','
        << top * b / kNormBins << ',' << top * (b + 1) / kNormBins << ',' << counts[b] << '\n';
}

}  // namespace

std::vector<KernelRunResult> run_kernel_study(const KernelConfig& config,
                                              const CommandOptions& options) {
  const KernelDataSource source(config.data);  // reads data files: bad input stops here
  check_interaction_dimension(config.repulsion, source.dim(), config.source, "repulsion");
  prepare_output_directory(config.output_directory, options.overwrite);
  const std::string dir = config.output_directory + "/";
  std::ofstream results_csv(dir + "results.csv"), diagnostics_csv(dir + "diagnostics.csv"),
      selection_csv(dir + "selection.csv"), curve_csv(dir + "learning_curve.csv"),
      norms_csv(dir + "norms.csv");
  results_csv << "label_noise,seed,n,method,accuracy,log_loss,brier,ece,ece_calibrated,"
                 "log_loss_calibrated,temperature,validation_accuracy,validation_log_loss,gamma,"
                 "beta,steps,l2,gamma_eff,lambda,repulsion_ratio_initial,repulsion_ratio_final,"
                 "anchor_ratio_initial,alignment,alignment_validation,effective_rank,mean_norm,"
                 "min_distance,mean_distance,seconds\n"
              << std::setprecision(10);
  diagnostics_csv << "label_noise,seed,n,method,step,alignment,min_distance,mean_distance\n"
                  << std::setprecision(10);
  selection_csv << "label_noise,seed,n,method,gamma,beta,step,l2,validation_accuracy,"
                   "validation_log_loss\n"
                << std::setprecision(10);
  curve_csv << "label_noise,seed,n,method,step,validation_accuracy,test_accuracy\n"
            << std::setprecision(10);
  norms_csv << "label_noise,seed,n,method,bin_low,bin_high,count\n" << std::setprecision(6);

  const auto& methods = config.baselines.methods;
  const double total = static_cast<double>(config.data.label_noise.size() * config.seeds *
                                           config.features.n.size() * methods.size());
  Progress progress("cpm kernel", total, options.progress);
  double done = 0.0;
  const double norm_top = 3.0 * config.features.scale * std::sqrt(double(source.dim()));
  std::vector<KernelRunResult> results;

  for (double noise : config.data.label_noise) {
    for (int r = 0; r < config.seeds; ++r) {
      const std::uint64_t seed = config.seed + static_cast<std::uint64_t>(r);
      const KernelRunData data = prepare_run_data(config, source.split(noise, seed), seed);
      ImportancePool pool;
      if (std::find(methods.begin(), methods.end(), "importance") != methods.end())
        pool = make_importance_pool(config, data, seed);

      for (Eigen::Index n : config.features.n) {
        std::map<std::string, MethodOutcome> by_method;
        // learned-null needs learned's choice: run it last.
        std::vector<std::string> order = methods;
        std::stable_partition(order.begin(), order.end(),
                              [](const std::string& m) { return m != "learned-null"; });
        for (const std::string& method : order) {
          MethodContext ctx;
          ctx.config = &config;
          ctx.data = &data;
          ctx.seed = seed;
          ctx.pool = &pool;
          ctx.learned = by_method.count("learned") ? &by_method.at("learned") : nullptr;
          ctx.on_progress = [&](const std::string& detail) { progress.update(done, detail); };
          KernelRunResult res;
          static_cast<MethodOutcome&>(res) = evaluate_method(ctx, method, n);
          res.label_noise = noise;
          res.seed = seed;
          by_method[method] = res;

          const auto& L = res.learning;
          results_csv << noise << ',' << seed << ',' << n << ',' << method << ','
                      << res.test.accuracy << ',' << res.test.log_loss << ',' << res.test.brier
                      << ',' << res.test.ece << ',' << res.test_calibrated.ece << ','
                      << res.test_calibrated.log_loss << ',' << res.temperature << ','
                      << res.validation.accuracy << ',' << res.validation.log_loss << ','
                      << res.gamma << ',' << res.beta << ',' << res.steps << ',' << res.l2 << ','
                      << L.gamma << ',' << L.lambda << ',' << L.repulsion_ratio_initial << ','
                      << L.repulsion_ratio_final << ',' << L.anchor_ratio_initial << ','
                      << res.alignment_fit << ',' << res.alignment_validation << ','
                      << res.effective_rank << ',' << res.norms.mean() << ',' << res.distances.min
                      << ',' << res.distances.mean << ',' << res.seconds << '\n';
          results_csv.flush();
          for (const auto& g : res.grid)
            selection_csv << noise << ',' << seed << ',' << n << ',' << method << ',' << g.gamma
                          << ',' << g.beta << ',' << g.step << ',' << g.l2 << ',' << g.accuracy
                          << ',' << g.log_loss << '\n';
          for (const auto& p : res.curve)
            curve_csv << noise << ',' << seed << ',' << n << ',' << method << ',' << p.step << ','
                      << p.validation_accuracy << ',' << p.test_accuracy << '\n';
          for (const auto& t : res.trace)
            diagnostics_csv << noise << ',' << seed << ',' << n << ',' << method << ',' << t.step
                            << ',' << t.alignment << ',' << t.distances.min << ','
                            << t.distances.mean << '\n';
          write_norm_histogram(norms_csv, res, norm_top);
          results.push_back(std::move(res));
          done += 1.0;
          std::ostringstream detail;
          detail << "noise " << noise << " seed " << seed << " N=" << n << " " << method
                 << " acc=" << std::setprecision(4) << results.back().test.accuracy;
          progress.update(done, detail.str());
        }
      }
    }
  }
  write_kernel_report(config, results);
  progress.finish("output in " + config.output_directory);
  return results;
}

}  // namespace cpm
