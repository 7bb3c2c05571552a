#include "transformer/trainer.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/random_stream.hpp"

namespace cpm {

std::int64_t steps_per_epoch(std::size_t examples, int batch_size) {
  return static_cast<std::int64_t>((examples + batch_size - 1) / batch_size);
}

Trainer::Trainer(TransformerClassifier<float>& model, const TrainerSettings& settings,
                 std::int64_t total_steps)
    : model_(model),
      settings_(settings),
      total_steps_(total_steps),
      optimiser_(model.weight_decay_mask(),
                 {settings.learning_rate, 0.9, 0.999, 1e-8, settings.weight_decay}) {}

TrainerState Trainer::state() const {
  return {step_,
          smoothed_loss_,
          seconds_,
          tokens_,
          optimiser_.steps(),
          optimiser_.first_moments(),
          optimiser_.second_moments()};
}

void Trainer::restore(const TrainerState& state) {
  optimiser_.restore(state.first_moments, state.second_moments, state.optimiser_steps);
  step_ = state.step;
  smoothed_loss_ = state.smoothed_loss;
  seconds_ = state.seconds;
  tokens_ = state.tokens;
}

std::size_t Trainer::run_epoch(const SequenceSet& data, int epoch,
                               const std::function<void(const TrainingStep&)>& on_log,
                               int log_every, std::size_t first_example,
                               const std::function<bool()>& stop) {
  const TrainerSettings& t = settings_;
  const std::size_t n = data.size();
  const std::vector<std::size_t> order = random_permutation(
      n, RandomStream(t.seed, RandomPurpose::training_order, 0, static_cast<std::uint64_t>(epoch)));
  for (std::size_t first = first_example; first < n; first += t.batch_size) {
    const auto start = std::chrono::steady_clock::now();
    const int count = static_cast<int>(std::min<std::size_t>(t.batch_size, n - first));
    const TokenBatch batch = batch_.gather(data, order.data() + first, count);
    int batch_tokens = 0;
    for (int b = 0; b < count; ++b) batch_tokens += batch.lengths[b];
    tokens_ += batch_tokens;
    ++step_;
    double loss = 0.0, norm = 0.0, lr = 0.0;
    {
      const GovernedStep governed(governor_, batch_tokens);
      model_.zero_gradients();
      loss = model_.forward(batch, true, static_cast<std::uint64_t>(step_), t.seed);
      model_.backward(batch);
      norm = clip_gradient_norm(model_.gradients(), t.clip_norm);
      lr = scheduled_learning_rate(t.learning_rate, step_, t.warmup_steps, total_steps_,
                                   t.min_learning_rate_ratio);
      optimiser_.step(model_.parameters(), model_.gradients(), lr);
    }
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    smoothed_loss_ = step_ == 1 ? loss : 0.98 * smoothed_loss_ + 0.02 * loss;
    if (!std::isfinite(loss))
      throw std::runtime_error("training loss became non-finite at step " + std::to_string(step_));
    if (on_log && (step_ % log_every == 0 || step_ == total_steps_))
      on_log({epoch + 1, step_, loss, smoothed_loss_, lr, norm, tokens_per_second()});
    if (stop && stop()) return std::min(n, first + t.batch_size);
  }
  return n;
}

}  // namespace cpm
