#include "experiments/kernel/kernel_study.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/stop_request.hpp"
#include "experiments/kernel/kernel_datasets.hpp"
#include "experiments/kernel/kernel_report.hpp"
#include "experiments/kernel/kernel_run_record.hpp"
#include "experiments/studies/replica_ensemble.hpp"
#include "io/input_error.hpp"
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

// The tables that receive every run as it finishes (or is restored from the checkpoint).
class KernelTables {
 public:
  KernelTables(const std::string& dir, double norm_top)
      : results_(dir + "results.csv"),
        diagnostics_(dir + "diagnostics.csv"),
        selection_(dir + "selection.csv"),
        curve_(dir + "learning_curve.csv"),
        norms_(dir + "norms.csv"),
        norm_top_(norm_top) {
    results_ << "label_noise,seed,n,method,accuracy,log_loss,brier,ece,ece_calibrated,"
                "log_loss_calibrated,temperature,validation_accuracy,validation_log_loss,gamma,"
                "beta,steps,l2,gamma_eff,lambda,repulsion_ratio_initial,repulsion_ratio_final,"
                "anchor_ratio_initial,alignment,alignment_validation,effective_rank,mean_norm,"
                "min_distance,mean_distance,seconds\n"
             << std::setprecision(10);
    diagnostics_ << "label_noise,seed,n,method,step,alignment,min_distance,mean_distance\n"
                 << std::setprecision(10);
    selection_ << "label_noise,seed,n,method,gamma,beta,step,l2,validation_accuracy,"
                  "validation_log_loss\n"
               << std::setprecision(10);
    curve_ << "label_noise,seed,n,method,step,validation_accuracy,test_accuracy\n"
           << std::setprecision(10);
    norms_ << "label_noise,seed,n,method,bin_low,bin_high,count\n" << std::setprecision(6);
  }

  void add(const KernelRunResult& r) {
    const auto& L = r.learning;
    results_ << r.label_noise << ',' << r.seed << ',' << r.n << ',' << r.method << ','
             << r.test.accuracy << ',' << r.test.log_loss << ',' << r.test.brier << ','
             << r.test.ece << ',' << r.test_calibrated.ece << ',' << r.test_calibrated.log_loss
             << ',' << r.temperature << ',' << r.validation.accuracy << ',' << r.validation.log_loss
             << ',' << r.gamma << ',' << r.beta << ',' << r.steps << ',' << r.l2 << ',' << L.gamma
             << ',' << L.lambda << ',' << L.repulsion_ratio_initial << ','
             << L.repulsion_ratio_final << ',' << L.anchor_ratio_initial << ',' << r.alignment_fit
             << ',' << r.alignment_validation << ',' << r.effective_rank << ',' << r.norms.mean()
             << ',' << r.distances.min << ',' << r.distances.mean << ',' << r.seconds << '\n';
    results_.flush();
    const auto key = [&](std::ostream& csv) -> std::ostream& {
      return csv << r.label_noise << ',' << r.seed << ',' << r.n << ',' << r.method << ',';
    };
    for (const auto& g : r.grid)
      key(selection_) << g.gamma << ',' << g.beta << ',' << g.step << ',' << g.l2 << ','
                      << g.accuracy << ',' << g.log_loss << '\n';
    for (const auto& p : r.curve)
      key(curve_) << p.step << ',' << p.validation_accuracy << ',' << p.test_accuracy << '\n';
    for (const auto& t : r.trace)
      key(diagnostics_) << t.step << ',' << t.alignment << ',' << t.distances.min << ','
                        << t.distances.mean << '\n';
    write_norm_histogram(norms_, r, norm_top_);
  }

 private:
  std::ofstream results_, diagnostics_, selection_, curve_, norms_;
  double norm_top_;
};

// One run of the study, in the order of the loops: label noise, seed, N, method.
struct PlannedKernelRun {
  double label_noise;
  std::uint64_t seed;
  Eigen::Index n;
  std::string method;
};

std::vector<PlannedKernelRun> plan_kernel_runs(const KernelConfig& config) {
  // learned-null needs learned's choice: it runs last at its N.
  std::vector<std::string> order = config.baselines.methods;
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& m) { return m != "learned-null"; });
  std::vector<PlannedKernelRun> plan;
  for (double noise : config.data.label_noise)
    for (int r = 0; r < config.seeds; ++r)
      for (Eigen::Index n : config.features.n)
        for (const std::string& method : order)
          plan.push_back({noise, config.seed + static_cast<std::uint64_t>(r), n, method});
  return plan;
}

// The finished run `index` of a checkpoint; InputError naming the file for a damaged record.
KernelRunResult restored_kernel_run(const ReplicaRecovery& recovery, int index,
                                    const PlannedKernelRun& p, const std::vector<double>& record) {
  const auto damaged = [&](const std::string& why) {
    return InputError(recovery.restart + ": not a readable replica checkpoint (run " +
                      std::to_string(index) + ": " + why + ")");
  };
  KernelRunResult r;
  try {
    r = kernel_run_from_record(record);
  } catch (const std::invalid_argument& e) {
    throw damaged(e.what());
  }
  if (r.label_noise != p.label_noise || r.seed != p.seed || r.n != p.n || r.method != p.method)
    throw damaged("another run than the planned one");
  return r;
}

}  // namespace

std::vector<KernelRunResult> run_kernel_study(const KernelConfig& config,
                                              const CommandOptions& options) {
  const KernelDataSource source(config.data);  // reads data files: bad input stops here
  check_interaction_dimension(config.repulsion, source.dim(), config.source, "repulsion");
  const ReplicaRecovery recovery{"kernel", config.source, config.output_directory, options.restart,
                                 "runs"};
  const std::vector<PlannedKernelRun> plan = plan_kernel_runs(config);
  const int count = static_cast<int>(plan.size());
  ReplicaCheckpoint finished = finished_replicas(recovery, count, 0);
  std::map<int, KernelRunResult> restored;  // read before anything is written
  for (const auto& [i, record] : finished.rows)
    restored.emplace(i, restored_kernel_run(recovery, i, plan[i], record));
  prepare_output_directory(config.output_directory,
                           options.overwrite || continues_in_place(recovery));
  KernelTables tables(config.output_directory + "/",
                      3.0 * config.features.scale * std::sqrt(double(source.dim())));
  Progress progress("cpm kernel", count, options.progress);

  const StopRequestHandler stop_handler;
  std::vector<KernelRunResult> results;
  // Made when a run of their (noise, seed) needs them: a restart rebuilds only what it uses.
  std::optional<KernelRunData> data;
  std::optional<ImportancePool> pool;
  std::optional<std::size_t> learned;  // learned's run at the current (noise, seed, N)
  for (int i = 0; i < count; ++i) {
    const PlannedKernelRun& p = plan[i];
    const bool new_data =
        i == 0 || p.label_noise != plan[i - 1].label_noise || p.seed != plan[i - 1].seed;
    if (new_data) {
      data.reset();
      pool.reset();
    }
    if (new_data || p.n != plan[i - 1].n) learned.reset();
    const auto saved = restored.find(i);
    if (saved != restored.end()) {
      results.push_back(std::move(saved->second));
    } else {
      try {
        stop_if_requested();
        if (!data) data = prepare_run_data(config, source.split(p.label_noise, p.seed), p.seed);
        if (p.method == "importance" && !pool) pool = make_importance_pool(config, *data, p.seed);
        MethodContext ctx;
        ctx.config = &config;
        ctx.data = &*data;
        ctx.seed = p.seed;
        ctx.pool = pool ? &*pool : nullptr;
        ctx.learned = learned ? &results[*learned] : nullptr;
        ctx.on_progress = [&](const std::string& detail) { progress.update(i, detail); };
        KernelRunResult run;
        static_cast<MethodOutcome&>(run) = evaluate_method(ctx, p.method, p.n);
        run.label_noise = p.label_noise;
        run.seed = p.seed;
        results.push_back(std::move(run));
      } catch (const StopRequested& stop) {  // between runs or inside a learning run
        progress.interrupt();
        throw save_finished_replicas(stop.signal(), recovery, std::move(finished));
      }
      finished.rows[i] = kernel_run_record(results.back());
    }
    if (p.method == "learned") learned = results.size() - 1;
    tables.add(results.back());
    std::ostringstream detail;
    detail << "noise " << p.label_noise << " seed " << p.seed << " N=" << p.n << " " << p.method
           << " acc=" << std::setprecision(4) << results.back().test.accuracy;
    progress.update(i + 1, detail.str());
  }
  write_kernel_report(config, results);
  discard_finished_replicas(recovery);
  progress.finish("output in " + config.output_directory);
  return results;
}

}  // namespace cpm
