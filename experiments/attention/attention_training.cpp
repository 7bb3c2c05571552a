#include "experiments/attention/attention_training.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "config/toml_reader.hpp"
#include "core/random_stream.hpp"
#include "core/stop_request.hpp"
#include "experiments/attention/comparison_experiment.hpp"
#include "experiments/attention/paired_protocol.hpp"
#include "frequencies/feature_generator.hpp"
#include "io/csv_table.hpp"
#include "io/input_error.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "io/text_file.hpp"
#include "io/training_checkpoint.hpp"
#include "transformer/classifier_batch_step.hpp"
#include "transformer/classifier_checkpoint.hpp"
#include "transformer/trainer.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

void initialise_particles(TransformerClassifier<float>& model, const std::string& law,
                          std::uint64_t seed) {
  const ModelShape& s = model.shape();
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h) {
      const std::uint64_t replica = static_cast<std::uint64_t>(l) * s.heads + h;
      const Eigen::MatrixXd w = initial_features(law, s.features, s.head_size(), seed, replica);
      float* omega = model.head_particles(l, h);
      for (int k = 0; k < s.features; ++k)
        for (int a = 0; a < s.head_size(); ++a)
          omega[k * s.head_size() + a] = static_cast<float>(w(k, a));
    }
}

}  // namespace

ModelShape attention_model_shape(const TrainConfig& config, int vocabulary, int classes,
                                 int max_length) {
  const ModelConfig& m = config.model;
  ModelShape s;
  s.vocabulary = vocabulary;
  s.max_length = max_length;
  s.d_model = m.d_model;
  s.heads = m.heads;
  s.layers = m.layers;
  s.d_ff = m.d_ff;
  s.classes = classes;
  s.features = m.features;
  s.attention = m.variant.attention;
  s.feature_map = {m.variant.map, m.feature_epsilon};
  s.feature_map.key_normalisation = m.normalise_keys;
  s.qk_tied = m.qk_tied;
  s.dropout = m.dropout;
  return s;
}

TransformerClassifier<float> make_attention_model(const TrainConfig& config,
                                                  const AttentionTask& task) {
  ModelShape shape =
      attention_model_shape(config, task.vocabulary_size, task.classes, task.max_length);
  try {
    shape.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(config.source + ": model: " + e.what());
  }
  const int buffer_length = static_cast<int>(std::min<std::size_t>(
      task.max_length, std::max(task.train.max_length(), task.evaluation.max_length())));
  TransformerClassifier<float> model(shape, config.training.batch_size, buffer_length);
  model.initialise_parameters(config.training.seed);
  if (shape.attention == AttentionKind::linear)
    initialise_particles(model, config.model.particle_init, config.training.seed);
  return model;
}

void write_metrics(const std::string& path, const std::vector<EvaluationCondition>& conditions) {
  std::ofstream out(path);
  out << "condition";
  for (const auto& c : metric_columns()) out << ',' << c;
  out << '\n' << std::setprecision(10);
  for (const auto& c : conditions) {
    out << c.name;
    for (double v : metric_values(c.result)) out << ',' << v;
    out << '\n';
  }
}

void write_predictions(const std::string& path, const std::vector<EvaluationCondition>& conditions,
                       const std::vector<int>& labels) {
  std::ofstream out(path);
  out << "example,label";
  for (const auto& c : conditions) out << ',' << c.name;
  out << '\n';
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out << i << ',' << labels[i];
    for (const auto& c : conditions) out << ',' << c.predictions[static_cast<Eigen::Index>(i)];
    out << '\n';
  }
}

void write_phase_a_table(const std::string& path, const std::vector<HeadAlignment>& heads) {
  CsvTable table(
      path, {"layer", "head", "alignment_before", "alignment_after", "gamma_effective", "lambda",
             "repulsion_ratio_start", "repulsion_ratio_end", "steps", "converged", "particle_norm",
             "particle_displacement", "linear_fit_residual", "unabsorbed_fraction", "seconds"});
  for (const auto& h : heads)
    table.add_row({double(h.layer), double(h.head), h.before, h.after, h.gamma, h.lambda,
                   h.repulsion_ratio_start, h.repulsion_ratio_end, double(h.steps),
                   double(h.converged), h.norm, h.displacement, h.fit_residual, h.unabsorbed,
                   h.seconds});
}

void print_metrics(std::ostream& out, const std::vector<EvaluationCondition>& conditions) {
  out << std::left << std::setw(18) << "condition";
  for (const auto& c : metric_columns()) out << std::setw(10) << c;
  out << '\n' << std::fixed << std::setprecision(4);
  for (const auto& c : conditions) {
    out << std::setw(18) << c.name;
    for (double v : metric_values(c.result)) out << std::setw(10) << v;
    out << '\n';
  }
  out.unsetf(std::ios::fixed);
}

std::string training_checkpoint_path(const std::string& directory) {
  return (std::filesystem::path(directory) / "training_checkpoint.h5").string();
}

namespace {

bool in_folder(const std::string& file, const std::string& directory) {
  std::error_code error;
  return std::filesystem::exists(directory, error) &&
         std::filesystem::equivalent(std::filesystem::absolute(file).parent_path(), directory,
                                     error);
}

// The model and trainer continue from `path`, at the epoch and example it was written at.
void restore_training(const std::string& path, const TrainConfig& config,
                      TransformerClassifier<float>& model, Trainer& trainer) {
  const TrainingCheckpoint c = load_training_checkpoint(path);
  if (c.fingerprint != text_fingerprint(read_text_file(config.source)))
    throw InputError(path + ": written by a training run with another configuration than " +
                     config.source);
  load_weights(model, c.model, path);
  try {
    trainer.restore({c.step, c.smoothed_loss, c.seconds, c.tokens, c.optimiser_steps,
                     c.first_moments, c.second_moments});
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what() + " (damaged checkpoint)");
  }
  trainer.seek(c.epoch, static_cast<std::size_t>(c.position));
}

}  // namespace

TrainResult train_attention_model(const TrainConfig& config, const AttentionTask& task,
                                  const std::string& directory, bool progress,
                                  const TrainingRecovery* recovery) {
  const TrainingConfig& t = config.training;
  const AttentionVariant& variant = config.model.variant;
  TransformerClassifier<float> model = make_attention_model(config, task);
  const ModelShape& shape = model.shape();
  const bool phase_a = shape.attention == AttentionKind::linear && variant.learned_particles;
  const int warmup_epochs = phase_a ? config.phase_a.warmup_epochs : 0;
  const int epochs = warmup_epochs + t.epochs;
  const std::int64_t total_steps = steps_per_epoch(task.train.size(), t.batch_size) * epochs;
  Trainer trainer(model, trainer_settings(t, t.batch_size, t.seed), total_steps, task.train.size());
  ClassifierBatchStep batch_step(model, task.train, t.seed);

  std::optional<StopRequestHandler> stop_handler;
  if (recovery) stop_handler.emplace();
  const bool restarting = recovery && !recovery->restart.empty();
  if (restarting) restore_training(recovery->restart, config, model, trainer);

  TrainResult result;
  CsvTable log(directory + "/training_log.csv",
               {"epoch", "step", "loss", "learning_rate", "gradient_norm", "tokens_per_second"},
               restarting && in_folder(recovery->restart, directory));
  auto run_phase = [&] {
    result.phase_a =
        run_phase_a(model, task.train, task.classes, config.phase_a, t.seed, t.batch_size, progress,
                    config.phase_a.write_tokens ? directory + "/phase_a_tokens.h5" : "");
    write_phase_a_table(directory + "/phase_a.csv", result.phase_a);
  };
  Progress bar("cpm train " + variant.name(),
               static_cast<double>(std::max<std::int64_t>(total_steps, 1)), progress);
  auto on_log = [&](const TrainingStep& s) {
    log.add_row({double(s.epoch), double(s.step), s.loss, s.learning_rate, s.gradient_norm,
                 s.tokens_per_second});
    std::ostringstream detail;
    detail << "epoch " << s.epoch << "/" << epochs << " step " << s.step << " loss "
           << std::setprecision(4) << s.smoothed_loss << " " << std::setprecision(0) << std::fixed
           << s.tokens_per_second << " tok/s";
    bar.update(static_cast<double>(s.step), detail.str());
  };
  const auto stop_requested = [&] { return stop_handler && stop_signal() != 0; };
  while (trainer.epoch() < epochs) {
    if (phase_a && trainer.epoch() == warmup_epochs && trainer.position() == 0) run_phase();
    trainer.run_epoch(batch_step, on_log, 50, stop_requested);
    if (stop_requested() && trainer.epoch() < epochs) {
      bar.interrupt();
      const TrainerState state = trainer.state();
      const std::string path = training_checkpoint_path(directory);
      save_training_checkpoint(
          path, {classifier_checkpoint(model, variant.name(), task.dataset, task.vocabulary),
                 text_fingerprint(read_text_file(config.source)), trainer.epoch(),
                 static_cast<std::int64_t>(trainer.position()), state.step, state.smoothed_loss,
                 state.seconds, state.tokens, state.optimiser_steps, state.first_moments,
                 state.second_moments});
      throw StopRequested(stop_signal(), "step " + std::to_string(state.step) + " of " +
                                             std::to_string(total_steps) + " saved in " + path +
                                             "; continue with: cpm train " + config.source +
                                             " --output " + directory + " --restart " + path);
    }
  }
  if (phase_a && epochs == warmup_epochs) run_phase();  // no Phase B epochs: Phase A only
  bar.finish();
  result.final_loss = trainer.smoothed_loss();
  result.seconds = trainer.seconds();
  result.tokens_per_second = trainer.tokens_per_second();
  result.evaluation =
      evaluate_conditions(model, task.evaluation, t.batch_size, config.evaluation.robustness,
                          config.evaluation.perturbation_seed);
  write_metrics(directory + "/metrics.csv", result.evaluation);
  save_model_checkpoint(
      directory + "/model.h5",
      classifier_checkpoint(model, variant.name(), task.dataset, task.vocabulary));
  if (restarting && in_folder(recovery->restart, directory))
    std::filesystem::remove(recovery->restart);  // a finished run keeps no checkpoint
  return result;
}

void run_train_command(const TrainConfig& config, const CommandOptions& options) {
  const std::string root = config.output_directory;
  if (!config.is_experiment()) {
    const AttentionTask task = load_attention_task(config.data);              // bad data stops here
    if (!options.restart.empty()) load_training_checkpoint(options.restart);  // so does a bad file
    prepare_output_directory(
        root, options.overwrite || (!options.restart.empty() && in_folder(options.restart, root)));
    const TrainingRecovery recovery{config.source, options.restart};
    const TrainResult r = train_attention_model(config, task, root, options.progress, &recovery);
    std::cout << task.dataset << " " << task.evaluation_split << ", " << config.model.variant.name()
              << ", " << std::fixed << std::setprecision(0) << r.tokens_per_second
              << " training tokens/s\n";
    print_metrics(std::cout, r.evaluation);
    std::cout << "results in " << root << "/ (metrics.csv, training_log.csv, model.h5)\n";
    return;
  }
  if (config.is_paired()) {
    run_paired_experiment(config, options);
    return;
  }
  run_comparison_experiment(config, options);
}

void run_eval_command(const TrainConfig& config, const std::string& checkpoint_path,
                      bool describe) {
  const std::string path =
      checkpoint_path.empty() ? config.output_directory + "/model.h5" : checkpoint_path;
  const ModelCheckpoint checkpoint = load_model_checkpoint(path);
  const ModelShape shape = checkpoint_shape(checkpoint, path);
  const AttentionTask task = load_attention_task(
      config.data, checkpoint.vocabulary.empty()
                       ? std::optional<std::vector<std::string>>{}
                       : std::optional<std::vector<std::string>>{checkpoint.vocabulary});
  const int vocabulary = checkpoint.vocabulary.empty()
                             ? task.vocabulary_size
                             : static_cast<int>(checkpoint.vocabulary.size());
  require_same_shape(attention_model_shape(config, vocabulary, task.classes, task.max_length),
                     shape, path);
  const int length =
      static_cast<int>(std::min<std::size_t>(task.max_length, task.evaluation.max_length()));
  TransformerClassifier<float> model(shape, config.training.batch_size, length);
  load_weights(model, checkpoint, path);
  const auto conditions =
      evaluate_conditions(model, task.evaluation, config.training.batch_size,
                          config.evaluation.robustness, config.evaluation.perturbation_seed);
  if (describe)
    std::cout << task.dataset << " " << task.evaluation_split << " (" << task.evaluation.size()
              << " examples), " << checkpoint_text(checkpoint, "variant", path) << " from " << path
              << "\n";
  print_metrics(std::cout, conditions);
}

void run_predict_command(const std::string& path, const std::vector<std::string>& texts) {
  const ModelCheckpoint checkpoint = load_model_checkpoint(path);
  if (checkpoint.vocabulary.empty())
    throw InputError(path + ": this model reads pixel sequences, not text (use cpm eval)");
  const ModelShape shape = checkpoint_shape(checkpoint, path);
  TransformerClassifier<float> model(shape, 1, shape.max_length);
  load_weights(model, checkpoint, path);
  const int K = shape.classes;
  for (const auto& text : texts) {
    std::vector<int> tokens = encode_text(checkpoint.vocabulary, text, shape.max_length,
                                          checkpoint_text(checkpoint, "dataset", path) == "qqp");
    const int length = static_cast<int>(tokens.size());
    model.forward({tokens.data(), &length, nullptr, 1, length});
    int best = 0;
    for (int k = 1; k < K; ++k)
      if (model.probabilities()[k] > model.probabilities()[best]) best = k;
    std::cout << best;
    for (int k = 0; k < K; ++k)
      std::cout << '\t' << std::setprecision(6) << model.probabilities()[k];
    std::cout << '\n';
  }
}

}  // namespace cpm
