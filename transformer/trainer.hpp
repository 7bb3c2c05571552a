#pragma once
// Phase B of docs/model.md §2: cross-entropy training of every parameter of the classifier with
// AdamW, linear warm-up then cosine decay of the learning rate, and gradient-norm clipping. The
// particles are not parameters, so they stay frozen. The batch order of epoch e is a permutation
// keyed by (seed, e) (RandomPurpose::training_order); a step allocates nothing. Each step runs on
// the thread count a ThreadGovernor finds faster on the machine as it is loaded now.
#include <cstdint>
#include <functional>
#include <vector>

#include "parallel/thread_governor.hpp"
#include "transformer/adamw.hpp"
#include "transformer/batching.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

struct TrainerSettings {
  int batch_size = 32;
  double learning_rate = 1e-3;
  int warmup_steps = 100;
  double min_learning_rate_ratio = 0.1;  // the cosine decays to this fraction of the rate
  double weight_decay = 0.01;
  double clip_norm = 1.0;
  std::uint64_t seed = 1;  // batch order and dropout
};

// What the trainer reports every `log_every` steps and at the last step of the schedule.
struct TrainingStep {
  int epoch = 0;  // counted from 1
  std::int64_t step = 0;
  double loss = 0.0;           // of this batch
  double smoothed_loss = 0.0;  // exponential moving average, weight 0.02
  double learning_rate = 0.0;
  double gradient_norm = 0.0;  // before clipping
  double tokens_per_second = 0.0;
};

// Everything a continued training needs besides the model: the step counters, the loss average,
// the timing totals and AdamW's moments.
struct TrainerState {
  std::int64_t step = 0;
  double smoothed_loss = 0.0, seconds = 0.0, tokens = 0.0;
  std::int64_t optimiser_steps = 0;
  std::vector<float> first_moments, second_moments;
};

class Trainer {
 public:
  // `total_steps` spans the learning-rate schedule (all epochs this trainer will run).
  Trainer(TransformerClassifier<float>& model, const TrainerSettings& settings,
          std::int64_t total_steps);

  // One pass over `data` in the order of epoch `epoch` (from 0), from its example `first` (0, or
  // where a stopped pass ended). After each step `stop()` may end the pass early. Returns the
  // position reached: data.size() for a whole pass. Throws std::runtime_error if the loss becomes
  // non-finite.
  std::size_t run_epoch(const SequenceSet& data, int epoch,
                        const std::function<void(const TrainingStep&)>& on_log = {},
                        int log_every = 50, std::size_t first = 0,
                        const std::function<bool()>& stop = {});

  TrainerState state() const;
  // Continues from a saved state; std::invalid_argument if it is not for this model's size.
  void restore(const TrainerState& state);

  std::int64_t steps() const { return step_; }
  double smoothed_loss() const { return smoothed_loss_; }
  double seconds() const { return seconds_; }  // in training steps only
  double tokens_per_second() const { return seconds_ > 0.0 ? tokens_ / seconds_ : 0.0; }

 private:
  TransformerClassifier<float>& model_;
  TrainerSettings settings_;
  std::int64_t total_steps_;
  AdamW<float> optimiser_;
  BatchBuffer batch_;
  ThreadGovernor governor_;
  std::int64_t step_ = 0;
  double smoothed_loss_ = 0.0, seconds_ = 0.0, tokens_ = 0.0;
};

// Steps per epoch at this batch size.
std::int64_t steps_per_epoch(std::size_t examples, int batch_size);

}  // namespace cpm
