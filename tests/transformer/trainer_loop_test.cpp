// The one training loop on a least-squares model small enough to follow by hand: the batches of
// an epoch, the dropped remainder, a stop and restart that continues exactly, trainable particles
// without weight decay, and a non-finite loss refused before any update.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "transformer/trainer.hpp"

namespace cpm {
namespace {

// Fits θ·x_i ≈ y_i for 10 examples in 2 dimensions; particles p follow ½‖p − 1‖².
struct LeastSquares {
  std::vector<float> theta{0.0f, 0.0f}, gradient{0.0f, 0.0f};
  std::vector<float> particles{3.0f}, particle_gradient{0.0f};
  std::vector<std::vector<std::size_t>> batches;  // the rows of every step

  static float x(std::size_t i, int a) { return static_cast<float>(a == 0 ? 1.0 : 0.1 * i); }
  static float y(std::size_t i) { return static_cast<float>(2.0 - 0.3 * i); }

  BatchLoss operator()(const std::size_t* rows, int count, std::int64_t) {
    batches.emplace_back(rows, rows + count);
    double loss = 0.0;
    gradient.assign(2, 0.0f);
    for (int b = 0; b < count; ++b) {
      const std::size_t i = rows[b];
      const float r = theta[0] * x(i, 0) + theta[1] * x(i, 1) - y(i);
      loss += 0.5 * r * r / count;
      for (int a = 0; a < 2; ++a) gradient[a] += r * x(i, a) / static_cast<float>(count);
    }
    particle_gradient[0] = particles[0] - 1.0f;
    return {loss, static_cast<double>(count)};
  }
};

TrainerSettings settings(int batch) {
  TrainerSettings s;
  s.batch_size = batch;
  s.learning_rate = 0.1;
  s.warmup_steps = 0;
  s.min_learning_rate_ratio = 1.0;
  s.weight_decay = 0.0;
  s.clip_norm = 0.0;
  return s;
}

std::vector<unsigned char> no_decay() {
  return {0, 0};
}

TEST(TrainerLoop, AnEpochVisitsEveryExampleOnceEndingWithAShortBatch) {
  LeastSquares m;
  Trainer trainer(m.theta, m.gradient, no_decay(), settings(4), 100, 10);
  EXPECT_TRUE(trainer.run_epoch(m));
  ASSERT_EQ(m.batches.size(), 3u);
  EXPECT_EQ(m.batches[2].size(), 2u);
  std::set<std::size_t> seen;
  for (const auto& b : m.batches) seen.insert(b.begin(), b.end());
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(trainer.epoch(), 1);
  EXPECT_EQ(trainer.position(), 0u);
  trainer.run_epoch(m);
  EXPECT_NE(m.batches[3], m.batches[0]);  // epoch 1 has an order of its own
}

TEST(TrainerLoop, ADroppedRemainderStartsTheNextEpochEarly) {
  LeastSquares m;
  TrainerSettings s = settings(4);
  s.drop_remainder = true;
  Trainer trainer(m.theta, m.gradient, no_decay(), s, 100, 10);
  trainer.step(m);
  trainer.step(m);
  EXPECT_EQ(trainer.epoch(), 1);  // 2 examples left, fewer than a batch
  for (const auto& b : m.batches) EXPECT_EQ(b.size(), 4u);
}

TEST(TrainerLoop, LearnsAndAStoppedRunContinuesExactly) {
  LeastSquares whole;
  Trainer a(whole.theta, whole.gradient, no_decay(), settings(3), 100, 10);
  for (int e = 0; e < 25; ++e) a.run_epoch(whole);
  EXPECT_NEAR(whole.theta[0], 2.0f, 0.1f);  // the exact fit θ = (2, −3)
  EXPECT_NEAR(whole.theta[1], -3.0f, 0.1f);

  // The same run stopped after step 41 (inside epoch 10), continued by a new trainer.
  LeastSquares part, rest;
  Trainer d(part.theta, part.gradient, no_decay(), settings(3), 100, 10);
  int count = 0;
  while (count < 41) d.run_epoch(part, {}, 50, [&] { return ++count == 41; });
  ASSERT_EQ(d.epoch(), 10);
  ASSERT_EQ(d.position(), 3u);
  const TrainerState state = d.state();
  rest.theta = part.theta;
  Trainer e(rest.theta, rest.gradient, no_decay(), settings(3), 100, 10);
  e.restore(state);
  e.seek(d.epoch(), d.position());
  while (e.epoch() < 25) e.run_epoch(rest);
  EXPECT_EQ(rest.theta, whole.theta);
  EXPECT_EQ(e.smoothed_loss(), a.smoothed_loss());
}

TEST(TrainerLoop, TrainableParticlesTakeStepsOfTheirOwnWithoutDecay) {
  LeastSquares m;
  TrainerSettings s = settings(5);
  s.weight_decay = 0.5;
  Trainer frozen(m.theta, m.gradient, {1, 1}, s, 100, 10);
  frozen.step(m);
  EXPECT_EQ(m.particles[0], 3.0f);
  Trainer trainer(m.theta, m.gradient, {1, 1}, s, 100, 10);
  trainer.train_particles(m.particles, m.particle_gradient);
  for (int i = 0; i < 200; ++i) trainer.step(m);
  EXPECT_NEAR(m.particles[0], 1.0f, 0.1f);  // decay would pull it towards 0
}

TEST(TrainerLoop, ANonFiniteLossStopsBeforeTheUpdate) {
  LeastSquares m;
  Trainer trainer(m.theta, m.gradient, no_decay(), settings(4), 100, 10);
  trainer.step(m);
  const std::vector<float> before = m.theta;
  const auto broken = [&](const std::size_t* rows, int count, std::int64_t step) {
    m(rows, count, step);
    return BatchLoss{std::numeric_limits<double>::quiet_NaN()};
  };
  EXPECT_THROW(trainer.step(broken), std::runtime_error);
  EXPECT_EQ(m.theta, before);
}

}  // namespace
}  // namespace cpm
