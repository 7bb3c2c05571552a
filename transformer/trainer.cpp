#include "transformer/trainer.hpp"

#include <algorithm>

#include "core/random_stream.hpp"

namespace cpm {

std::int64_t steps_per_epoch(std::size_t examples, int batch_size) {
  return static_cast<std::int64_t>((examples + batch_size - 1) / batch_size);
}

Trainer::Trainer(std::vector<float>& parameters, std::vector<float>& gradients,
                 std::vector<unsigned char> decay_mask, const TrainerSettings& settings,
                 std::int64_t total_steps, std::size_t examples)
    : parameters_(parameters),
      gradients_(gradients),
      settings_(settings),
      total_steps_(total_steps),
      examples_(examples),
      optimiser_(std::move(decay_mask),
                 {settings.learning_rate, 0.9, 0.999, 1e-8, settings.weight_decay}),
      particle_optimiser_({}, {settings.learning_rate, 0.9, 0.999, 1e-8, 0.0}) {
  if (examples == 0 || settings.batch_size < 1)
    throw std::invalid_argument("training needs at least one example and a batch of one");
}

void Trainer::train_particles(std::vector<float>& particles, std::vector<float>& gradients) {
  particles_ = &particles;
  particle_gradients_ = &gradients;
  particle_optimiser_ = AdamW<float>(std::vector<unsigned char>(particles.size(), 0),
                                     {settings_.learning_rate, 0.9, 0.999, 1e-8, 0.0});
}

void Trainer::seek(int epoch, std::size_t position) {
  epoch_ = epoch;
  position_ = position;
}

int Trainer::next_batch_size() {
  if (order_epoch_ != epoch_) {
    order_ =
        random_permutation(examples_, RandomStream(settings_.seed, RandomPurpose::training_order, 0,
                                                   static_cast<std::uint64_t>(epoch_)));
    order_epoch_ = epoch_;
  }
  return static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(settings_.batch_size), examples_ - position_));
}

Trainer::Update Trainer::apply_update(std::int64_t step) {
  const TrainerSettings& t = settings_;
  const double drop = t.drop_step > 0 && step > t.drop_step ? t.drop_factor : 1.0;
  const double rate = scheduled_learning_rate(t.learning_rate, step, t.warmup_steps, total_steps_,
                                              t.min_learning_rate_ratio) *
                      drop;
  const double norm = gradient_norm(gradients_);
  optimiser_.step(parameters_, gradients_, rate, clip_scale(norm, t.clip_norm));
  if (particles_)
    particle_optimiser_.step(*particles_, *particle_gradients_, rate,
                             clip_scale(gradient_norm(*particle_gradients_), t.clip_norm));
  return {rate, norm};
}

TrainingStep Trainer::finish_step(const BatchLoss& batch, const Update& update, int count,
                                  double seconds) {
  ++step_;
  seconds_ += seconds;
  tokens_ += batch.work;
  smoothed_loss_ = step_ == 1 ? batch.loss : 0.98 * smoothed_loss_ + 0.02 * batch.loss;
  const TrainingStep s{epoch_ + 1,           step_,
                       batch.loss,           smoothed_loss_,
                       update.learning_rate, update.gradient_norm,
                       tokens_per_second()};
  // The next batch: a new epoch once this one has no examples left (or fewer than a batch, when
  // the remainder is dropped).
  position_ += static_cast<std::size_t>(count);
  const std::size_t least =
      settings_.drop_remainder ? static_cast<std::size_t>(settings_.batch_size) : 1;
  if (examples_ - position_ < least) seek(epoch_ + 1, 0);
  return s;
}

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

}  // namespace cpm
