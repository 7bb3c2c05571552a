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

// Loads and encodes `config.dataset`. The tokenizer is built from the training split unless a
// vocabulary is given (from a checkpoint); then only the evaluation split is encoded.
AttentionTask load_attention_task(const DataConfig& config,
                                  const std::optional<std::vector<std::string>>& vocabulary = {});

// Token ids of free text (for `cpm predict`); a TAB separates the two sentences of a pair task.
std::vector<int> encode_text(const std::vector<std::string>& vocabulary, const std::string& text,
                             int max_length, bool pairs);

}  // namespace cpm
