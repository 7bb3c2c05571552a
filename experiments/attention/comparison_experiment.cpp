#include "experiments/attention/comparison_experiment.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>

#include "core/stop_request.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/studies/replica_ensemble.hpp"
#include "io/output_directory.hpp"
#include "io/text_file.hpp"
#include "io/training_checkpoint.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

struct RunRow {
  std::string dataset, variant;
  std::uint64_t seed;
  TrainResult result;
};

std::string mean_std_text(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double var = 0.0;
  for (double x : v) var += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(var / (v.size() - 1)) : 0.0;
  std::ostringstream o;
  o << std::fixed << std::setprecision(4) << mean << " ± " << sd;
  return o.str();
}

// comparison.md / comparison.csv: mean ± sample std over seeds of every metric, clean and
// perturbed; comparison.png: clean accuracy per variant and data set.
void write_comparison(const std::string& dir, const std::vector<RunRow>& rows,
                      const std::vector<std::string>& datasets,
                      const std::vector<std::string>& variants) {
  std::ofstream raw(dir + "/comparison_runs.csv");
  raw << "dataset,variant,seed,condition,accuracy,mcc,ece,log_loss,brier,tokens_per_second\n"
      << std::setprecision(10);
  for (const auto& r : rows)
    for (const auto& c : r.result.evaluation) {
      raw << r.dataset << ',' << r.variant << ',' << r.seed << ',' << c.name;
      for (double v : metric_values(c.result)) raw << ',' << v;
      raw << ',' << r.result.tokens_per_second << '\n';
    }
  std::ofstream md(dir + "/comparison.md");
  Panel bars;  // clean accuracy: a group per variant, a bar per data set
  bars.y_label = "accuracy";
  bars.categories = variants;
  for (const auto& d : datasets) {
    Curve curve{d, {}, std::vector<double>(variants.size(), std::nan("")), {}, Curve::Style::points,
                -1};
    curve.error.assign(variants.size(), 0.0);
    bars.curves.push_back(curve);
  }
  for (std::size_t di = 0; di < datasets.size(); ++di) {
    const std::string& d = datasets[di];
    md << "### " << d
       << "\n\n| variant | accuracy | MCC | ECE | log loss | Brier | acc. word drop 10% | acc. "
          "word drop 20% | acc. swaps |\n"
       << "|---|---|---|---|---|---|---|---|---|\n";
    for (std::size_t vi = 0; vi < variants.size(); ++vi) {
      const std::string& v = variants[vi];
      std::map<std::string, std::vector<std::vector<double>>> by_condition;
      for (const auto& r : rows)
        if (r.dataset == d && r.variant == v)
          for (const auto& c : r.result.evaluation)
            by_condition[c.name].push_back(metric_values(c.result));
      if (by_condition.empty()) continue;
      auto column = [&](const std::string& condition, std::size_t metric) {
        std::vector<double> values;
        for (const auto& m : by_condition[condition]) values.push_back(m[metric]);
        return values;
      };
      md << "| " << v;
      for (std::size_t k = 0; k < metric_columns().size(); ++k)
        md << " | " << mean_std_text(column("clean", k));
      const std::vector<std::string> perturbed = condition_names(true);  // after "clean"
      for (auto c = perturbed.begin() + 1; c != perturbed.end(); ++c)
        md << " | " << (by_condition.count(*c) ? mean_std_text(column(*c, 0)) : "–");
      md << " |\n";
      const auto acc = column("clean", 0);
      const double mean = std::accumulate(acc.begin(), acc.end(), 0.0) / acc.size();
      double var = 0.0;
      for (double x : acc) var += (x - mean) * (x - mean);
      bars.curves[di].y[vi] = mean;
      bars.curves[di].error[vi] = acc.size() > 1 ? std::sqrt(var / (acc.size() - 1)) : 0.0;
    }
    md << "\n";
  }
  draw_figure({dir + "/comparison.png", "clean accuracy (mean ± std over seeds)", {bars}});
}

// One training run of the experiment.
struct PlannedTraining {
  std::size_t data_index;
  std::string variant;
  std::uint64_t seed;
  std::string folder;  // relative to the experiment's output folder
};

// A finished run as the checkpoint keeps it: the metrics of every condition, then tokens/s.
std::vector<double> run_values(const TrainResult& r) {
  std::vector<double> values;
  for (const EvaluationCondition& c : r.evaluation)
    for (double v : metric_values(c.result)) values.push_back(v);
  values.push_back(r.tokens_per_second);
  return values;
}

TrainResult recorded_run(const std::vector<double>& values,
                         const std::vector<std::string>& conditions) {
  TrainResult r;
  const std::size_t width = metric_columns().size();
  for (std::size_t k = 0; k < conditions.size(); ++k)
    r.evaluation.push_back({conditions[k], metrics_from_values(values.data() + k * width), {}});
  r.tokens_per_second = values.back();
  return r;
}

}  // namespace

void run_comparison_experiment(const TrainConfig& config, const CommandOptions& options) {
  const std::string& root = config.output_directory;
  const ExperimentConfig& e = config.experiment;
  const ExperimentTasks loaded = load_experiment_tasks(config);  // bad data stops here
  const std::vector<std::string>& datasets = loaded.datasets;
  std::vector<PlannedTraining> plan;
  for (std::size_t k = 0; k < datasets.size(); ++k)
    for (const auto& variant : e.variants)
      for (const auto seed : e.seeds)
        plan.push_back(
            {k, variant, seed, datasets[k] + "/" + variant + "/seed_" + std::to_string(seed)});
  const std::vector<std::string> conditions = condition_names(config.evaluation.robustness);
  const int width = static_cast<int>(conditions.size() * metric_columns().size() + 1);
  const ReplicaRecovery recovery{"train", config.source, root, options.restart, "runs"};
  ReplicaCheckpoint finished = finished_replicas(recovery, static_cast<int>(plan.size()), width);
  prepare_output_directory(root, options.overwrite || continues_in_place(recovery));
  // The folder of the stopped experiment, where its run under way left its checkpoint.
  const std::filesystem::path stopped =
      options.restart.empty() ? "" : std::filesystem::path(options.restart).parent_path();

  const StopRequestHandler stop_handler;
  std::vector<RunRow> rows;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedTraining& p = plan[i];
    const std::string& dataset = datasets[p.data_index];
    const auto saved = finished.rows.find(static_cast<int>(i));
    if (saved != finished.rows.end()) {
      rows.push_back({dataset, p.variant, p.seed, recorded_run(saved->second, conditions)});
      continue;
    }
    TrainConfig run = config;
    run.data = loaded.data[p.data_index];
    run.model.variant = parse_attention_variant(p.variant);
    run.training.seed = p.seed;
    const std::string dir = root + "/" + p.folder;
    std::filesystem::create_directories(dir);
    const std::string checkpoint =
        stopped.empty() ? "" : training_checkpoint_path((stopped / p.folder).string());
    const TrainingRecovery training{
        config.source,
        !checkpoint.empty() && std::filesystem::exists(checkpoint) ? checkpoint : ""};
    if (options.progress)
      std::cerr << "== " << dataset << " " << p.variant << " seed " << p.seed << '\n';
    try {
      stop_if_requested();
      rows.push_back({dataset, p.variant, p.seed,
                      train_attention_model(run, loaded.tasks[p.data_index], dir, options.progress,
                                            &training)});
    } catch (const StopRequested& stop) {  // the run under way keeps its own checkpoint
      throw save_finished_replicas(stop.signal(), recovery, std::move(finished));
    }
    finished.rows[static_cast<int>(i)] = run_values(rows.back().result);
    write_comparison(root, rows, datasets, e.variants);  // kept current as runs finish
  }
  write_comparison(root, rows, datasets, e.variants);
  discard_finished_replicas(recovery);
  std::cout << read_text_file(root + "/comparison.md");
  std::cout << "comparison table in " << root << "/comparison.md, chart in " << root
            << "/comparison.png\n";
}

}  // namespace cpm
