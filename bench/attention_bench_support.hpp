#pragma once
// Shared set-up of the attention benchmarks: the benchmark architecture (d_model 64, 4 heads,
// 2 layers, feed-forward 128, m = 64, no dropout) and one timed training step on random tokens.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/feature_initialisation.hpp"
#include "core/random_stream.hpp"
#include "learning/recall_tasks.hpp"
#include "transformer/adamw.hpp"
#include "transformer/transformer_classifier.hpp"
#include "transformer/transformer_decoder.hpp"

namespace cpm::bench {

inline ModelShape benchmark_shape(AttentionKind attention, int length) {
  ModelShape s;
  s.vocabulary = 10000;
  s.max_length = length;
  s.d_model = 64;
  s.heads = 4;
  s.layers = 2;
  s.d_ff = 128;
  s.features = 64;
  s.attention = attention;
  s.feature_map = {FeatureMapKind::favor, 1e-6};
  s.dropout = 0.0;
  return s;
}

// The particles of every head, i.i.d. N(0, 1) rows of head_size (the benchmark models' draw).
inline void fill_benchmark_particles(std::vector<float>& particles, int head_size) {
  if (particles.empty()) return;
  const Eigen::MatrixXd w =
      gaussian_features(static_cast<Eigen::Index>(particles.size() / head_size), head_size, 1.0, 2);
  for (Eigen::Index r = 0; r < w.rows(); ++r)
    for (int a = 0; a < head_size; ++a) particles[r * head_size + a] = static_cast<float>(w(r, a));
}

// One training step of `model`: zeroed gradients, `forward_backward`, clipping at norm 1 and
// one AdamW step; returns its seconds.
template <class Model, class ForwardBackward>
double timed_training_step(Model& model, AdamW<float>& optimiser,
                           const ForwardBackward& forward_backward) {
  const auto start = std::chrono::steady_clock::now();
  model.zero_gradients();
  forward_backward();
  optimiser.step(model.parameters(), model.gradients(), 1e-3,
                 clip_scale(gradient_norm(model.gradients()), 1.0));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `warmup` untimed steps of `bench`, then the mean over `steps` (as the PyTorch scripts measure).
template <class StepBench>
double mean_step_seconds(StepBench& bench, int warmup, int steps) {
  for (int i = 0; i < warmup; ++i) bench.step();
  double total = 0.0;
  for (int i = 0; i < steps; ++i) total += bench.step();
  return total / steps;
}

struct TrainingStepBench {
  TransformerClassifier<float> model;
  AdamW<float> optimiser;
  std::vector<int> tokens, lengths, labels;
  int batch, length;

  TrainingStepBench(AttentionKind attention, int batch_size, int sequence_length)
      : model(benchmark_shape(attention, sequence_length), batch_size, sequence_length),
        optimiser(model.weight_decay_mask(), {}),
        batch(batch_size),
        length(sequence_length) {
    model.initialise_parameters(1);
    fill_benchmark_particles(model.particles(), model.shape().head_size());
    RandomStream s(3, RandomPurpose::test_inputs, 0, 0);
    tokens.resize(static_cast<std::size_t>(batch) * length);
    for (auto& t : tokens) t = 3 + static_cast<int>(s.uniform() * 9997);
    lengths.assign(batch, length);
    labels.resize(batch);
    for (auto& l : labels) l = s.uniform() < 0.5;
  }

  // Forward, backward, clipping and one AdamW step; returns seconds.
  double step() {
    const TokenBatch b{tokens.data(), lengths.data(), labels.data(), batch, length};
    return timed_training_step(model, optimiser, [&] {
      model.forward(b, false);
      model.backward(b);
    });
  }

  double seconds_per_step(int warmup, int steps) { return mean_step_seconds(*this, warmup, steps); }
};

constexpr int kDecoderVocabulary = 8192;

// The benchmark model as a decoder, with one MQAR batch (N = L/16 pairs, so N scored positions
// per sequence); one timed training step as the classifier's TrainingStepBench.
struct DecoderStepBench {
  MqarSet data;
  TransformerDecoder<float> model;
  AdamW<float> optimiser;
  int batch, length;

  static ModelShape shape(AttentionKind attention, int length) {
    ModelShape s = benchmark_shape(attention, length);
    s.vocabulary = kDecoderVocabulary;
    return s;
  }

  DecoderStepBench(AttentionKind attention, int batch_size, int sequence_length)
      : data(make_mqar({kDecoderVocabulary, sequence_length, sequence_length / 16, 0.01, true},
                       batch_size, 3, RecallSplit::train)),
        model(shape(attention, sequence_length), batch_size, sequence_length,
              batch_size * (sequence_length / 16)),
        optimiser(model.weight_decay_mask(), {}),
        batch(batch_size),
        length(sequence_length) {
    model.initialise_parameters(1);
    bench::fill_benchmark_particles(model.particles(), model.shape().head_size());
  }

  // Forward, backward, clipping and one AdamW step; returns seconds.
  double step() {
    const DecoderBatch b{data.inputs.data(), data.targets.data(), batch, length};
    return timed_training_step(model, optimiser, [&] {
      model.forward(b);
      model.backward(b);
    });
  }

  double seconds_per_step(int warmup, int steps) { return mean_step_seconds(*this, warmup, steps); }
};

}  // namespace cpm::bench
