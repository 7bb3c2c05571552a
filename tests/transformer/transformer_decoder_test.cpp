// The causal decoder: its gradient against finite differences (double, tiny configuration, every
// attention kind, with and without the MLP), causality of the whole network, the head running on
// scored positions only, and training that learns a recall task.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/feature_initialisation.hpp"
#include "tests/transformer/finite_difference.hpp"
#include "transformer/adamw.hpp"
#include "transformer/transformer_decoder.hpp"

namespace cpm {
namespace {

ModelShape tiny_shape(AttentionKind attention, FeatureMapKind map, bool tied, int d_ff) {
  ModelShape s;
  s.vocabulary = 9;
  s.max_length = 7;
  s.d_model = 8;
  s.heads = 2;
  s.layers = 2;
  s.d_ff = d_ff;
  s.features = 5;
  s.attention = attention;
  s.feature_map = {map, 0.0};
  s.qk_tied = tied;
  s.dropout = 0.0;
  return s;
}

template <class T>
void fill_particles(TransformerDecoder<T>& model, std::uint64_t seed) {
  if (model.particles().empty()) return;
  const ModelShape& s = model.shape();
  const Eigen::MatrixXd w =
      gaussian_features(s.layers * s.heads * model.particle_rows(), s.head_size(), 1.0, seed);
  for (Eigen::Index r = 0; r < w.rows(); ++r)
    for (Eigen::Index a = 0; a < w.cols(); ++a)
      model.particles()[r * w.cols() + a] = static_cast<T>(w(r, a));
}

struct Case {
  AttentionKind attention;
  FeatureMapKind map;
  bool tied;
  int d_ff;
  const char* name;
};

class DecoderGradient : public ::testing::TestWithParam<Case> {};

TEST_P(DecoderGradient, WholeModelGradientMatchesFiniteDifferences) {
  const Case c = GetParam();
  TransformerDecoder<double> model(tiny_shape(c.attention, c.map, c.tied, c.d_ff), 2, 7);
  model.initialise_parameters(5);
  auto& theta = model.parameters();
  const auto noise = testing::random_vector(theta.size(), 6, 0.3);
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
  fill_particles(model, 7);
  const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
  const int targets[14] = {-1, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
  const DecoderBatch batch{tokens, targets, 2, 7};
  model.zero_gradients();
  model.forward(batch);
  EXPECT_EQ(model.scored(), 7);
  model.backward(batch);
  std::vector<double> analytic = model.gradients();
  testing::expect_gradient(
      theta, analytic, [&] { return model.forward(batch); }, std::string("dθ ") + c.name, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    EveryAttention, DecoderGradient,
    ::testing::Values(
        Case{AttentionKind::softmax, FeatureMapKind::favor, false, 12, "softmax"},
        Case{AttentionKind::softmax, FeatureMapKind::favor, true, 0, "softmax_tied_no_mlp"},
        Case{AttentionKind::linear, FeatureMapKind::favor, false, 12, "favor"},
        Case{AttentionKind::linear, FeatureMapKind::favor, false, 0, "favor_no_mlp"},
        Case{AttentionKind::linear, FeatureMapKind::porf_softplus, true, 0, "softplus_tied"},
        Case{AttentionKind::linear, FeatureMapKind::softmaxfeat, false, 12, "softmaxfeat"},
        Case{AttentionKind::uniform, FeatureMapKind::favor, false, 0, "uniform"}),
    [](const auto& info) { return std::string(info.param.name); });

// Trainable particles: d loss / d particles through the causal attention of every layer.
TEST(DecoderParticleGradient, MatchesFiniteDifferencesForEveryParticleMap) {
  for (FeatureMapKind map :
       {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat,
        FeatureMapKind::hedgehog, FeatureMapKind::taylor}) {
    ModelShape s = tiny_shape(AttentionKind::linear, map, false, 0);
    s.features = 6;  // hedgehog: 3 particles, D_φ = 6; taylor: d′ = 2, D_φ = 1 + 2 + 3
    TransformerDecoder<double> model(s, 2, 7);
    model.initialise_parameters(5);
    auto& theta = model.parameters();
    const auto noise = testing::random_vector(theta.size(), 6, 0.3);
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
    fill_particles(model, 7);
    const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
    const int targets[14] = {-1, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
    const DecoderBatch batch{tokens, targets, 2, 7};
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch, true);
    std::vector<double> analytic = model.particle_gradients();
    testing::expect_gradient(
        model.particles(), analytic, [&] { return model.forward(batch); },
        "dΩ " + feature_map_name(map), 1e-7);
  }
}

// The logits at position t depend on tokens ≤ t only: changing the last tokens of a sequence
// leaves every earlier scored position's logits unchanged (ε = 0, so favor's shared key shift
// cancels exactly).
TEST(DecoderCausality, LaterTokensDoNotChangeEarlierLogits) {
  for (AttentionKind kind :
       {AttentionKind::softmax, AttentionKind::linear, AttentionKind::uniform}) {
    TransformerDecoder<double> model(tiny_shape(kind, FeatureMapKind::favor, false, 12), 1, 7);
    model.initialise_parameters(8);
    fill_particles(model, 9);
    const int targets[7] = {0, 0, 0, 0, -1, -1, -1};  // positions 0..3 scored
    const int first[7] = {4, 2, 7, 1, 3, 3, 3};
    model.forward({first, targets, 1, 7});
    const std::vector<double> reference(model.logits(), model.logits() + 4 * 9);
    const int second[7] = {4, 2, 7, 1, 8, 5, 6};
    model.forward({second, targets, 1, 7});
    for (int i = 0; i < 4 * 9; ++i) EXPECT_NEAR(model.logits()[i], reference[i], 1e-12);
  }
}

// Logits at a scored position do not depend on which other positions are scored.
TEST(DecoderScoring, LogitsOfAPositionDoNotDependOnTheOtherScoredPositions) {
  TransformerDecoder<double> model(
      tiny_shape(AttentionKind::linear, FeatureMapKind::favor, false, 0), 1, 7);
  model.initialise_parameters(3);
  fill_particles(model, 4);
  const int tokens[7] = {1, 2, 3, 4, 5, 6, 7};
  const int all[7] = {0, 1, 2, 3, 4, 5, 6};
  const int one[7] = {-1, -1, -1, -1, -1, 5, -1};
  model.forward({tokens, all, 1, 7});
  const std::vector<double> reference(model.logits() + 5 * 9, model.logits() + 6 * 9);
  model.forward({tokens, one, 1, 7});
  ASSERT_EQ(model.scored(), 1);
  EXPECT_EQ(model.scored_positions()[0], 5);
  for (int k = 0; k < 9; ++k) EXPECT_NEAR(model.logits()[k], reference[k], 1e-12);
}

TEST(DecoderShape, RefusesDropoutAndTargetsOutsideTheVocabulary) {
  ModelShape s = tiny_shape(AttentionKind::softmax, FeatureMapKind::favor, false, 0);
  s.dropout = 0.1;
  EXPECT_THROW(TransformerDecoder<double>(s, 1, 7), std::invalid_argument);
  s.dropout = 0.0;
  TransformerDecoder<double> model(s, 1, 7);
  model.initialise_parameters(1);
  const int tokens[7] = {1, 2, 3, 4, 5, 6, 7};
  const int targets[7] = {-1, -1, 9, -1, -1, -1, -1};
  EXPECT_THROW(model.forward({tokens, targets, 1, 7}), std::invalid_argument);
}

// A tiny recall task: sequences "k1 v1 k2 v2 k1 ? k2 ?" style, keys from {1,2,3}, values from
// {4,5,6,7}; the target at the last two positions is the value paired with the key read there.
// Softmax attention must learn it (loss below 0.1) within 400 AdamW steps; uniform attention
// cannot tell the pairs apart and stays above 0.5.
double train_recall(AttentionKind attention) {
  ModelShape s = tiny_shape(attention, FeatureMapKind::favor, false, 0);
  s.vocabulary = 8;
  s.max_length = 6;
  s.d_model = 32;
  s.heads = 1;
  s.features = 32;
  const int B = 32, L = 6;
  TransformerDecoder<float> model(s, B, L);
  model.initialise_parameters(11);
  AdamW<float> optimiser(model.weight_decay_mask(), {3e-3, 0.9, 0.999, 1e-8, 0.0});
  RandomStream stream(13, RandomPurpose::test_inputs, 0, 0);
  std::vector<int> tokens(B * L), targets(B * L);
  double recent = 0.0;
  const int steps = 400;
  for (int step = 1; step <= steps; ++step) {
    for (int b = 0; b < B; ++b) {
      int* t = tokens.data() + b * L;
      int* y = targets.data() + b * L;
      const int k1 = 1 + static_cast<int>(stream.uniform() * 3), k2 = 1 + (k1 % 3);
      const int v1 = 4 + static_cast<int>(stream.uniform() * 4);
      const int v2 = 4 + (v1 - 4 + 1 + static_cast<int>(stream.uniform() * 3)) % 4;
      const bool swap = stream.uniform() < 0.5;
      const int t_values[6] = {k1, v1, k2, v2, swap ? k2 : k1, swap ? k1 : k2};
      const int y_values[6] = {-1, -1, -1, -1, swap ? v2 : v1, swap ? v1 : v2};
      std::copy_n(t_values, L, t);
      std::copy_n(y_values, L, y);
    }
    const DecoderBatch batch{tokens.data(), targets.data(), B, L};
    model.zero_gradients();
    const double loss = model.forward(batch);
    model.backward(batch);
    optimiser.step(model.parameters(), model.gradients(), 3e-3);
    if (step > steps - 20) recent += loss / 20;
  }
  return recent;
}

TEST(DecoderTraining, SoftmaxLearnsATinyRecallTaskThatUniformAttentionCannot) {
  EXPECT_LT(train_recall(AttentionKind::softmax), 0.1);
  EXPECT_GT(train_recall(AttentionKind::uniform), 0.5);
}

}  // namespace
}  // namespace cpm
