#pragma once
// The one training loop of cpm (docs/model.md §2): AdamW with linear warm-up, cosine decay and an
// optional drop of the rate, clipping by the global gradient norm, a check of the loss before
// each update, and batches in an order keyed by (seed, epoch) (RandomPurpose::training_order).
// The classifier (Phase B), the decoder and the recall models train through it; what a model
// computes on a batch is the caller's batch step. Particles are frozen unless train_particles()
// gives them Adam steps of their own. A step allocates nothing but the order of a new epoch. Each
// step runs on the thread count a ThreadGovernor finds faster on the machine as it is loaded now.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel/thread_governor.hpp"
#include "transformer/adamw.hpp"

namespace cpm {

struct TrainerSettings {
  int batch_size = 32;
  double learning_rate = 1e-3;
  int warmup_steps = 100;
  double min_learning_rate_ratio = 0.1;  // the cosine decays to this fraction of the rate
  double weight_decay = 0.01;
  double clip_norm = 1.0;  // 0: no clipping
  int drop_step = 0;       // after this step (0: never) the rate is multiplied by drop_factor
  double drop_factor = 1.0;
  bool drop_remainder = false;  // an epoch's last examples fewer than a batch are skipped
  std::uint64_t seed = 1;       // batch order and dropout
};

// What a batch step returns: the batch's loss and its work (tokens; 1 for batches of one size),
// by which the trainer's throughput and its thread governor compare steps.
struct BatchLoss {
  double loss = 0.0;
  double work = 1.0;
};

// What the trainer reports after a step.
struct TrainingStep {
  int epoch = 0;  // of the batch, counted from 1
  std::int64_t step = 0;
  double loss = 0.0;           // of this batch
  double smoothed_loss = 0.0;  // exponential moving average, weight 0.02
  double learning_rate = 0.0;
  double gradient_norm = 0.0;  // before clipping
  double tokens_per_second = 0.0;
};

// Everything a continued training needs besides the model and the position in the data: the step
// counters, the loss average, the timing totals and AdamW's moments.
struct TrainerState {
  std::int64_t step = 0;
  double smoothed_loss = 0.0, seconds = 0.0, tokens = 0.0;
  std::int64_t optimiser_steps = 0;
  std::vector<float> first_moments, second_moments;
};

class Trainer {
 public:
  // Trains `parameters` (gradients in `gradients`; decay_mask[i]: parameter i takes weight decay)
  // on `examples` training examples; `total_steps` spans the learning-rate schedule.
  Trainer(std::vector<float>& parameters, std::vector<float>& gradients,
          std::vector<unsigned char> decay_mask, const TrainerSettings& settings,
          std::int64_t total_steps, std::size_t examples);
  template <class Model>
  Trainer(Model& model, const TrainerSettings& settings, std::int64_t total_steps,
          std::size_t examples)
      : Trainer(model.parameters(), model.gradients(), model.weight_decay_mask(), settings,
                total_steps, examples) {}

  // Particles that take Adam steps of their own: the same rate, no weight decay, clipped on their
  // own.
  void train_particles(std::vector<float>& particles, std::vector<float>& gradients);

  // One optimiser step on the next batch. batch_step(rows, count, step) zeroes the gradients,
  // computes the loss of training examples rows[0..count) and its gradients, and returns a
  // BatchLoss; `step` counts from 1 (dropout and redrawn features key on it). Throws
  // std::runtime_error, before updating, if the loss is not finite.
  template <class BatchStep>
  TrainingStep step(BatchStep&& batch_step) {
    const int count = next_batch_size();
    const std::size_t* rows = order_.data() + position_;
    const auto start = std::chrono::steady_clock::now();
    BatchLoss batch;
    Update update;
    {
      GovernedStep governed(governor_);
      batch = batch_step(rows, count, step_ + 1);
      governed.set_work(batch.work);
      if (!std::isfinite(batch.loss))
        throw std::runtime_error("training loss became non-finite at step " +
                                 std::to_string(step_ + 1));
      update = apply_update(step_ + 1);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return finish_step(batch, update, count, seconds);
  }

  // Steps until the epoch under way ends, calling on_log every `log_every` steps and at the
  // schedule's last step; after each step `stop()` may end early. Returns whether the epoch ended.
  template <class BatchStep>
  bool run_epoch(BatchStep&& batch_step,
                 const std::function<void(const TrainingStep&)>& on_log = {}, int log_every = 50,
                 const std::function<bool()>& stop = {}) {
    const int epoch = epoch_;
    while (epoch_ == epoch) {
      const TrainingStep s = step(batch_step);
      if (on_log && (s.step % log_every == 0 || s.step == total_steps_)) on_log(s);
      if (stop && stop()) return epoch_ != epoch;
    }
    return true;
  }

  // Where the next batch starts: example `position` of epoch `epoch`'s order (from 0).
  void seek(int epoch, std::size_t position);
  int epoch() const { return epoch_; }
  std::size_t position() const { return position_; }

  TrainerState state() const;
  // Continues from a saved state; std::invalid_argument if it is not for these parameters.
  void restore(const TrainerState& state);

  std::int64_t steps() const { return step_; }
  double smoothed_loss() const { return smoothed_loss_; }
  double seconds() const { return seconds_; }  // in training steps only
  double tokens_per_second() const { return seconds_ > 0.0 ? tokens_ / seconds_ : 0.0; }

 private:
  struct Update {
    double learning_rate = 0.0, gradient_norm = 0.0;
  };
  int next_batch_size();
  Update apply_update(std::int64_t step);
  TrainingStep finish_step(const BatchLoss& batch, const Update& update, int count, double seconds);

  std::vector<float>& parameters_;
  std::vector<float>& gradients_;
  std::vector<float>* particles_ = nullptr;
  std::vector<float>* particle_gradients_ = nullptr;
  TrainerSettings settings_;
  std::int64_t total_steps_;
  std::size_t examples_;
  AdamW<float> optimiser_, particle_optimiser_;
  ThreadGovernor governor_;
  std::vector<std::size_t> order_;
  int order_epoch_ = -1;  // the epoch whose order order_ holds
  int epoch_ = 0;
  std::size_t position_ = 0;
  std::int64_t step_ = 0;
  double smoothed_loss_ = 0.0, seconds_ = 0.0, tokens_ = 0.0;
};

// Steps per epoch at this batch size (the last batch may be short).
std::int64_t steps_per_epoch(std::size_t examples, int batch_size);

}  // namespace cpm
