#pragma once
// `cpm train`: the attention protocol of docs/model.md §2 on one task — optional warm-up epochs,
// Phase A (kernel-<map> variants only), Phase B (cross-entropy training with the particles frozen),
// then evaluation with the robustness conditions. An experiment configuration repeats it for every
// variant, seed and data set and writes one comparison table (mean ± std) and a bar chart.
#include <ostream>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "experiments/attention/attention_data.hpp"
#include "experiments/attention/attention_evaluation.hpp"
#include "experiments/attention/attention_phase_a.hpp"
#include "experiments/command_options.hpp"
#include "experiments/trainer_settings.hpp"

namespace cpm {

// A single training run stops cleanly on SIGINT/SIGTERM: after the step under way, the model
// and the trainer's state go to <directory>/training_checkpoint.h5 (io/training_checkpoint.hpp)
// and StopRequested names the command that continues; `restart` continues from such a file,
// bit for bit, appending to the training log when it lies in `directory`.
struct TrainingRecovery {
  std::string config_path;  // fingerprinted; named in the hint
  std::string restart;
};

struct TrainResult {
  std::vector<EvaluationCondition> evaluation;
  std::vector<HeadAlignment> phase_a;
  double final_loss = 0.0;
  double tokens_per_second = 0.0;
  double seconds = 0.0;
};

// Trains on `task` and writes into `directory`: training_log.csv, phase_a.csv (kernel variants),
// metrics.csv and model.h5. Without `recovery` a signal has its default action.
TrainResult train_attention_model(const TrainConfig& config, const AttentionTask& task,
                                  const std::string& directory, bool progress,
                                  const TrainingRecovery* recovery = nullptr);

// Pieces shared with the paired protocol (experiments/attention/paired_protocol.hpp).
// The model shape of a configuration once the vocabulary size and class count are known.
ModelShape attention_model_shape(const TrainConfig& config, int vocabulary, int classes,
                                 int max_length);
// A model of the configured shape, buffers sized for the task, parameters and particles
// initialised from training.seed. InputError naming the model section for an impossible shape.
TransformerClassifier<float> make_attention_model(const TrainConfig& config,
                                                  const AttentionTask& task);
// metrics.csv: one row per condition; predictions.csv: the predicted class of every example under
// every condition, with its label.
void write_metrics(const std::string& path, const std::vector<EvaluationCondition>& conditions);
void write_predictions(const std::string& path, const std::vector<EvaluationCondition>& conditions,
                       const std::vector<int>& labels);
// phase_a.csv: one row per head (attention_phase_a.hpp, HeadAlignment).
void write_phase_a_table(const std::string& path, const std::vector<HeadAlignment>& heads);
void print_metrics(std::ostream& out, const std::vector<EvaluationCondition>& conditions);

// The checkpoint a stopped training run leaves in its folder: DIR/training_checkpoint.h5.
std::string training_checkpoint_path(const std::string& directory);

// The whole `cpm train CONFIG` command: a single run, or the experiment of the configuration.
void run_train_command(const TrainConfig& config, const CommandOptions& options);

// `cpm eval CONFIG [--checkpoint FILE]`: the metrics of a saved model on the configured data,
// after a line naming the data and the model when `describe` is set.
void run_eval_command(const TrainConfig& config, const std::string& checkpoint, bool describe);

// `cpm predict CHECKPOINT`: one line per text, "label<TAB>p_0 … p_{C−1}".
void run_predict_command(const std::string& checkpoint, const std::vector<std::string>& texts);

}  // namespace cpm
