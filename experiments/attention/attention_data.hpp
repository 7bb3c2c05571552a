#pragma once
// The token sequences of an attention-training task: data set → tokenizer → (train, evaluation)
// sequences with labels.
#include <optional>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "transformer/batching.hpp"

namespace cpm {

struct AttentionTask {
  std::string dataset;
  std::string evaluation_split;  // "dev" (SST-2, QQP), "test" (Rotten Tomatoes, Fashion-MNIST)
  int classes = 2;
  int max_length = 64;
  int vocabulary_size = 0;
  std::vector<std::string> vocabulary;  // the tokenizer's words; empty for pixel sequences
  bool pairs = false;
  SequenceSet train, evaluation;
};

// The folder holding the text data sets (sst2/, rotten_tomatoes/), found when a command runs:
// CPM_DATA_DIR in the environment, else the build's default (CMake cache variable CPM_DATA_DIR).
std::string data_folder();

// Loads and encodes `config.dataset`. The tokenizer is built from the training split unless a
// vocabulary is given (from a checkpoint); then only the evaluation split is encoded.
AttentionTask load_attention_task(const DataConfig& config,
                                  const std::optional<std::vector<std::string>>& vocabulary = {});

// The data sets of an experiment ([experiment] datasets, or [data] dataset alone), each with its
// [data] settings (a data set other than [data]'s takes its default folder), all read before
// anything is written.
struct ExperimentTasks {
  std::vector<std::string> datasets;  // their names, as the reports and folders write them
  std::vector<DataConfig> data;
  std::vector<AttentionTask> tasks;
};
ExperimentTasks load_experiment_tasks(const TrainConfig& config);

// Token ids of free text (for `cpm predict`); a TAB separates the two sentences of a pair task.
std::vector<int> encode_text(const std::vector<std::string>& vocabulary, const std::string& text,
                             int max_length, bool pairs);

}  // namespace cpm
