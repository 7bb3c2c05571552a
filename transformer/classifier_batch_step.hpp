#pragma once
// The trainer's batch step for the classifier (Phase B of docs/model.md §2): the sequences of
// the batch padded into one TokenBatch, zeroed gradients, the forward pass in training mode
// (dropout keyed by (seed, step)) and the backward pass. Its work is the batch's token count.
#include <cstddef>
#include <cstdint>

#include "transformer/batching.hpp"
#include "transformer/trainer.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

class ClassifierBatchStep {
 public:
  ClassifierBatchStep(TransformerClassifier<float>& model, const SequenceSet& data,
                      std::uint64_t seed)
      : model_(model), data_(data), seed_(seed) {}

  BatchLoss operator()(const std::size_t* rows, int count, std::int64_t step) {
    const TokenBatch batch = batch_.gather(data_, rows, count);
    int tokens = 0;
    for (int b = 0; b < count; ++b) tokens += batch.lengths[b];
    model_.zero_gradients();
    const double loss = model_.forward(batch, true, static_cast<std::uint64_t>(step), seed_);
    model_.backward(batch);
    return {loss, static_cast<double>(tokens)};
  }

 private:
  TransformerClassifier<float>& model_;
  const SequenceSet& data_;
  std::uint64_t seed_;
  BatchBuffer batch_;
};

}  // namespace cpm
