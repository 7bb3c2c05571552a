#include "experiments/attention/paired_protocol.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "core/stop_request.hpp"
#include "experiments/attention/paired_run_record.hpp"
#include "experiments/studies/replica_ensemble.hpp"
#include "experiments/trainer_settings.hpp"
#include "io/csv_table.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "io/text_file.hpp"
#include "transformer/classifier_batch_step.hpp"
#include "transformer/classifier_checkpoint.hpp"

namespace cpm {

namespace {

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001B3ULL;
  }
  return hash;
}

// Runs `epochs` epochs (orders first_epoch, first_epoch + 1, …) with a fresh trainer whose
// schedule spans them, logging to `log_path`.
Trainer& train_epochs(Trainer& trainer, ClassifierBatchStep& batch_step, int first_epoch,
                      int epochs, const std::string& log_path, const std::string& label,
                      bool progress) {
  CsvTable log(log_path,
               {"epoch", "step", "loss", "learning_rate", "gradient_norm", "tokens_per_second"});
  Progress bar(label, std::max(1.0, static_cast<double>(epochs)), progress);
  auto on_log = [&](const TrainingStep& s) {
    log.add_row({double(s.epoch), double(s.step), s.loss, s.learning_rate, s.gradient_norm,
                 s.tokens_per_second});
  };
  trainer.seek(first_epoch, 0);
  for (int e = 0; e < epochs; ++e) {
    trainer.run_epoch(batch_step, on_log, 50, [] { return stop_signal() != 0; });
    if (stop_signal() != 0) bar.interrupt();
    stop_if_requested();  // the experiment saves its finished runs
    std::ostringstream detail;
    detail << "loss " << std::setprecision(4) << trainer.smoothed_loss();
    bar.update(static_cast<double>(e + 1), detail.str());
  }
  bar.finish();
  return trainer;
}

struct Checkpoint {
  std::string path;
  std::int64_t steps = 0;
};

// Stage 1: the configured variant from its initialisation for phase_a.warmup_epochs epochs.
Checkpoint pretrain(const TrainConfig& config, const AttentionTask& task,
                    const std::string& directory, bool progress) {
  std::filesystem::create_directories(directory);
  TransformerClassifier<float> model = make_attention_model(config, task);
  const int epochs = config.phase_a.warmup_epochs;
  Trainer trainer(
      model, trainer_settings(config.training, config.training.batch_size, config.training.seed),
      steps_per_epoch(task.train.size(), config.training.batch_size) * epochs, task.train.size());
  ClassifierBatchStep batch_step(model, task.train, config.training.seed);
  train_epochs(trainer, batch_step, 0, epochs, directory + "/pretrain_log.csv",
               "pretrain " + config.model.variant.name(), progress);
  Checkpoint c{directory + "/checkpoint.h5", trainer.steps()};
  save_model_checkpoint(c.path, classifier_checkpoint(model, config.model.variant.name(),
                                                      task.dataset, task.vocabulary));
  return c;
}

// Stages 2 and 3: load the checkpoint, optionally run Phase A, train training.epochs epochs.
ArmResult continue_arm(const TrainConfig& config, const AttentionTask& task,
                       const Checkpoint& checkpoint, bool phase_a, const std::string& directory,
                       bool progress) {
  std::filesystem::create_directories(directory);
  TransformerClassifier<float> model = make_attention_model(config, task);
  load_weights(model, load_model_checkpoint(checkpoint.path), checkpoint.path);
  ArmResult r;
  r.arm = config.model.variant.name();
  r.start_digest = model_digest(model);
  r.pretrain_steps = checkpoint.steps;
  const TrainingConfig& t = config.training;
  if (phase_a) {
    const auto start = std::chrono::steady_clock::now();
    r.phase_a = run_phase_a(model, task.train, task.classes, config.phase_a, t.seed, t.batch_size,
                            progress);
    r.phase_a_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_phase_a_table(directory + "/phase_a.csv", r.phase_a);
  }
  Trainer trainer(model, trainer_settings(t, t.batch_size, t.seed),
                  steps_per_epoch(task.train.size(), t.batch_size) * t.epochs, task.train.size());
  ClassifierBatchStep batch_step(model, task.train, t.seed);
  train_epochs(trainer, batch_step, config.phase_a.warmup_epochs, t.epochs,
               directory + "/training_log.csv", r.arm, progress);
  r.steps = trainer.steps();
  r.train_seconds = trainer.seconds();
  r.evaluation =
      evaluate_conditions(model, task.evaluation, t.batch_size, config.evaluation.robustness,
                          config.evaluation.perturbation_seed);
  write_metrics(directory + "/metrics.csv", r.evaluation);
  write_predictions(directory + "/predictions.csv", r.evaluation, task.evaluation.labels);
  return r;
}

}  // namespace

std::uint64_t model_digest(const TransformerClassifier<float>& model) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  h = fnv1a(model.parameters().data(), model.parameters().size() * sizeof(float), h);
  return fnv1a(model.particles().data(), model.particles().size() * sizeof(float), h);
}

PairedRun run_paired_map(const TrainConfig& config, const AttentionTask& task,
                         const std::string& directory, bool progress) {
  const AttentionVariant kernel = config.model.variant;
  if (kernel.attention != AttentionKind::linear || !kernel.learned_particles)
    throw std::invalid_argument("paired protocol: run_paired_map needs a kernel-<map> variant");
  TrainConfig vanilla = config;
  vanilla.model.variant.learned_particles = false;
  const Checkpoint checkpoint = pretrain(vanilla, task, directory, progress);
  PairedRun run;
  run.vanilla = continue_arm(vanilla, task, checkpoint, false, directory + "/vanilla", progress);
  run.kernel = continue_arm(config, task, checkpoint, true, directory + "/kernel", progress);
  return run;
}

ArmResult run_control(const TrainConfig& config, const AttentionTask& task,
                      const std::string& directory, bool progress) {
  const Checkpoint checkpoint = pretrain(config, task, directory, progress);
  return continue_arm(config, task, checkpoint, false, directory, progress);
}

void run_paired_experiment(const TrainConfig& config, const CommandOptions& options) {
  const std::string root = config.output_directory;
  const ExperimentConfig& e = config.experiment;
  const ExperimentTasks loaded = load_experiment_tasks(config);  // bad data stops here
  const std::vector<std::string>& datasets = loaded.datasets;
  const std::vector<AttentionTask>& tasks = loaded.tasks;
  std::map<std::string, std::vector<int>> labels;
  for (std::size_t k = 0; k < datasets.size(); ++k)
    labels[datasets[k]] = tasks[k].evaluation.labels;
  std::vector<std::string> maps, controls;
  for (const auto& v : e.variants) {
    const AttentionVariant a = parse_attention_variant(v);
    if (a.learned_particles)
      maps.push_back(feature_map_name(a.map));
    else
      controls.push_back(v);
  }
  // Every (data set, seed, variant) in order: a kernel-<map> variant's two arms, or a control.
  struct PlannedRun {
    std::size_t data_index;
    std::uint64_t seed;
    std::string variant;
  };
  std::vector<PlannedRun> plan;
  for (std::size_t k = 0; k < datasets.size(); ++k)
    for (const auto seed : e.seeds)
      for (const auto& variant : e.variants) plan.push_back({k, seed, variant});
  const ReplicaRecovery recovery{"train", config.source, root, options.restart, "runs"};
  ReplicaCheckpoint finished = finished_replicas(recovery, static_cast<int>(plan.size()), 0);
  prepare_output_directory(root, options.overwrite || continues_in_place(recovery));
  const std::vector<std::string> conditions = condition_names(config.evaluation.robustness);

  const StopRequestHandler stop_handler;
  std::vector<ArmRecord> records;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedRun& p = plan[i];
    const std::string& dataset = datasets[p.data_index];
    TrainConfig run = config;
    run.data = loaded.data[p.data_index];
    run.model.variant = parse_attention_variant(p.variant);
    run.training.seed = p.seed;
    const bool kernel = run.model.variant.learned_particles;
    const std::string name = kernel ? feature_map_name(run.model.variant.map) : p.variant;
    const std::string map = kernel ? name : "";
    TrainConfig vanilla = run;
    vanilla.model.variant.learned_particles = false;
    const auto saved = finished.rows.find(static_cast<int>(i));
    if (saved != finished.rows.end()) {  // a finished run of the stopped experiment
      std::size_t at = 0;
      if (kernel)
        records.push_back({dataset, p.seed, map,
                           read_arm_values(saved->second, at, vanilla.model.variant.name(),
                                           conditions, options.restart)});
      records.push_back({dataset, p.seed, map,
                         read_arm_values(saved->second, at, run.model.variant.name(), conditions,
                                         options.restart)});
    } else {
      const std::string dir = root + "/" + dataset + "/seed_" + std::to_string(p.seed) + "/" + name;
      if (options.progress)
        std::cerr << "== " << dataset << " seed " << p.seed << " " << p.variant << '\n';
      std::vector<double> values;
      try {
        stop_if_requested();
        if (kernel) {
          PairedRun r = run_paired_map(run, tasks[p.data_index], dir, options.progress);
          records.push_back({dataset, p.seed, map, std::move(r.vanilla)});
          append_arm_values(records.back().result, values);
          records.push_back({dataset, p.seed, map, std::move(r.kernel)});
        } else {
          records.push_back(
              {dataset, p.seed, "", run_control(run, tasks[p.data_index], dir, options.progress)});
        }
      } catch (const StopRequested& stop) {  // the run under way starts again on restart
        throw save_finished_replicas(stop.signal(), recovery, std::move(finished));
      }
      append_arm_values(records.back().result, values);
      finished.rows[static_cast<int>(i)] = std::move(values);
      if (!e.keep_checkpoints) std::filesystem::remove(dir + "/checkpoint.h5");
    }
    const bool seed_done = i + 1 == plan.size() || plan[i + 1].seed != p.seed ||
                           plan[i + 1].data_index != p.data_index;
    if (seed_done)  // kept current as seeds finish
      write_paired_report(root, records, labels, datasets, maps, controls, config);
  }
  discard_finished_replicas(recovery);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << read_text_file(root + "/paired.md");
  std::cout << "paired comparison in " << root << "/paired.md (" << std::fixed
            << std::setprecision(0) << seconds << " s), every run in " << root
            << "/paired_runs.csv, every Phase A head in " << root << "/phase_a_runs.csv\n";
}

}  // namespace cpm
