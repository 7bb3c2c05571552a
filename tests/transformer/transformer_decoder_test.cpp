// The causal decoder: its gradient against finite differences (double, tiny configuration, every
// attention kind, with and without the MLP, and the convolution hybrid), causality of the whole
// network, the head running on scored positions only, and training that learns a recall task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>

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

// GPT-2's initial parameters moved by noise of scale 0.3, and Gaussian particles: a point away
// from the initial symmetries, where every gradient entry is nonzero.
void move_from_initial_values(TransformerDecoder<double>& model) {
  model.initialise_parameters(5);
  const auto noise = testing::random_vector(model.parameters().size(), 6, 0.3);
  for (std::size_t i = 0; i < noise.size(); ++i) model.parameters()[i] += noise[i];
  fill_particles(model, 7);
}

// The whole model's gradient at its parameters on one batch against central finite differences.
void expect_whole_model_gradient(TransformerDecoder<double>& model, const DecoderBatch& batch,
                                 const std::string& what) {
  model.zero_gradients();
  model.forward(batch);
  model.backward(batch);
  const std::vector<double> analytic = model.gradients();
  testing::expect_gradient(
      model.parameters(), analytic, [&] { return model.forward(batch); }, what, 1e-7);
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
  move_from_initial_values(model);
  const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
  const int targets[14] = {-1, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
  expect_whole_model_gradient(model, {tokens, targets, 2, 7}, std::string("dθ ") + c.name);
  EXPECT_EQ(model.scored(), 7);
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

// A vocabulary of 512 doubles fills whole 4 KB columns of logits: their columns get one cache line
// more (logits_stride), which the cross-entropy and the head's backward pass must follow.
TEST(DecoderGradient, PaddedVocabularyGradientMatchesFiniteDifferences) {
  ModelShape shape = tiny_shape(AttentionKind::linear, FeatureMapKind::favor, false, 0);
  shape.vocabulary = 512;
  TransformerDecoder<double> model(shape, 2, 7);
  ASSERT_EQ(model.logits_stride(), 520);
  move_from_initial_values(model);
  const int tokens[14] = {2, 300, 4, 511, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
  const int targets[14] = {-1, 400, -1, 6, 7, -1, 1, 3, -1, -1, 511, -1, -1, 2};
  const DecoderBatch batch{tokens, targets, 2, 7};
  const double loss = model.forward(batch);
  double expected = 0.0;  // −mean log p(target), read through the padded columns
  for (int s = 0, n = 0; n < 14; ++n)
    if (targets[n] >= 0) expected -= std::log(model.probabilities()[s++ * 520 + targets[n]]) / 7;
  EXPECT_NEAR(loss, expected, 1e-12);
  expect_whole_model_gradient(model, batch, "dθ padded vocabulary");
}

// The convolution hybrid of Zoology's MQAR anchor: BaseConv with k = 3 in the even layers,
// attention in the odd ones, no position embedding.
struct HybridCase {
  AttentionKind attention;
  bool tied;
  int d_ff, layers;
  const char* name;
};

ModelShape hybrid_shape(const HybridCase& c) {
  ModelShape s = tiny_shape(c.attention, FeatureMapKind::favor, c.tied, c.d_ff);
  s.layers = c.layers;
  s.conv_kernel = 3;
  s.position_embedding = false;
  return s;
}

class HybridDecoderGradient : public ::testing::TestWithParam<HybridCase> {};

TEST_P(HybridDecoderGradient, WholeModelGradientMatchesFiniteDifferences) {
  const HybridCase c = GetParam();
  TransformerDecoder<double> model(hybrid_shape(c), 2, 7);
  move_from_initial_values(model);
  const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
  const int targets[14] = {3, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
  expect_whole_model_gradient(model, {tokens, targets, 2, 7}, std::string("dθ ") + c.name);
  EXPECT_EQ(model.scored(), 8);
}

INSTANTIATE_TEST_SUITE_P(
    ConvolutionThenAttention, HybridDecoderGradient,
    ::testing::Values(HybridCase{AttentionKind::softmax, false, 12, 2, "softmax"},
                      HybridCase{AttentionKind::softmax, true, 0, 3, "softmax_tied_three_layers"},
                      HybridCase{AttentionKind::uniform, false, 0, 2, "uniform"},
                      HybridCase{AttentionKind::linear, false, 0, 2, "favor"},
                      HybridCase{AttentionKind::linear, false, 12, 3, "favor_mlp_three_layers"}),
    [](const auto& info) { return std::string(info.param.name); });

// Particle gradients of the hybrid: the attention layers' against finite differences, the unused
// blocks of the convolution layers exactly 0.
TEST(HybridDecoderParticleGradient, AttentionLayersMatchFiniteDifferencesConvolutionLayersAreZero) {
  TransformerDecoder<double> model(hybrid_shape({AttentionKind::linear, false, 0, 3, "favor"}), 2,
                                   7);
  model.initialise_parameters(5);
  fill_particles(model, 7);
  const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
  const int targets[14] = {-1, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
  const DecoderBatch batch{tokens, targets, 2, 7};
  model.zero_gradients();
  model.forward(batch);
  model.backward(batch, true);
  std::vector<double> analytic = model.particle_gradients();
  const std::ptrdiff_t block = model.particle_rows() * model.shape().head_size();
  for (int l : {0, 2})
    for (int h = 0; h < model.shape().heads; ++h) {
      const std::ptrdiff_t at = model.head_particles(l, h) - model.particles().data();
      for (std::ptrdiff_t i = 0; i < block; ++i) EXPECT_EQ(analytic[at + i], 0.0) << l << " " << h;
    }
  const std::ptrdiff_t at = model.head_particles(1, 0) - model.particles().data();
  double largest = 0.0;
  for (std::ptrdiff_t i = 0; i < block; ++i)
    largest = std::max(largest, std::abs(analytic[at + i]));
  EXPECT_GT(largest, 0.0);
  testing::expect_gradient(
      model.particles(), analytic, [&] { return model.forward(batch); }, "dΩ hybrid", 1e-7);
}

// The hybrid's tensors: BaseConv's in the even layers, attention's in the odd ones, no position
// table; qkv() is null for a convolution layer.
TEST(HybridDecoderShape, TensorsNamesShapesAndInitialisation) {
  ModelShape s = hybrid_shape({AttentionKind::softmax, false, 12, 3, "softmax"});
  s.d_model = 16;
  s.heads = 2;
  TransformerDecoder<double> model(s, 1, 7);
  EXPECT_THROW(model.tensor("embedding.position"), std::invalid_argument);
  for (int l : {0, 2}) {
    const std::string p = "layers." + std::to_string(l) + ".";
    const ParameterTensor& w = model.tensor(p + "conv.weight");
    EXPECT_EQ(w.rows, 16);
    EXPECT_EQ(w.cols, 3);
    EXPECT_TRUE(w.decay);
    EXPECT_EQ(model.tensor(p + "conv.bias").size(), 16u);
    EXPECT_FALSE(model.tensor(p + "conv.bias").decay);
    EXPECT_EQ(model.tensor(p + "conv.proj.weight").rows, 16);
    EXPECT_EQ(model.tensor(p + "conv.proj.weight").cols, 16);
    EXPECT_EQ(model.tensor(p + "conv.proj.bias").size(), 16u);
    EXPECT_EQ(model.tensor(p + "mlp.fc.weight").rows, 12);
    EXPECT_THROW(model.tensor(p + "attention.qkv.weight"), std::invalid_argument);
    EXPECT_THROW(model.tensor(p + "attention.proj.weight"), std::invalid_argument);
  }
  EXPECT_EQ(model.tensor("layers.1.attention.qkv.weight").rows, 48);
  EXPECT_THROW(model.tensor("layers.1.conv.weight"), std::invalid_argument);

  // Conv1d's default: weight and bias U(±1/√3); the projection N(0, 0.02), its bias 0.
  model.initialise_parameters(21);
  const double bound = 1.0 / std::sqrt(3.0);
  for (const char* name : {"layers.0.conv.weight", "layers.0.conv.bias", "layers.2.conv.bias"}) {
    const ParameterTensor& t = model.tensor(name);
    double largest = 0.0, sum = 0.0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double v = model.parameters()[t.offset + i];
      EXPECT_LT(std::abs(v), bound) << name;
      largest = std::max(largest, std::abs(v));
      sum += v;
    }
    EXPECT_GT(largest, 0.5 * bound) << name;
    EXPECT_LT(std::abs(sum / t.size()), 0.5 * bound) << name;
  }
  const ParameterTensor& proj = model.tensor("layers.0.conv.proj.weight");
  double square = 0.0;
  for (std::size_t i = 0; i < proj.size(); ++i)
    square += model.parameters()[proj.offset + i] * model.parameters()[proj.offset + i];
  EXPECT_NEAR(std::sqrt(square / proj.size()), 0.02, 0.005);
  const ParameterTensor& proj_bias = model.tensor("layers.0.conv.proj.bias");
  for (std::size_t i = 0; i < proj_bias.size(); ++i)
    EXPECT_EQ(model.parameters()[proj_bias.offset + i], 0.0);

  const int tokens[7] = {1, 2, 3, 4, 5, 6, 7};
  model.forward({tokens, nullptr, 1, 7});
  EXPECT_EQ(model.qkv(0), nullptr);
  EXPECT_NE(model.qkv(1), nullptr);
  EXPECT_EQ(model.qkv(2), nullptr);
}

// Without a position embedding the hybrid is still causal: the convolution reads earlier positions
// only.
TEST(HybridDecoderCausality, LaterTokensDoNotChangeEarlierLogits) {
  for (AttentionKind kind :
       {AttentionKind::softmax, AttentionKind::linear, AttentionKind::uniform}) {
    TransformerDecoder<double> model(hybrid_shape({kind, false, 12, 3, "causal"}), 1, 7);
    model.initialise_parameters(8);
    fill_particles(model, 9);
    const int targets[7] = {0, 0, 0, 0, -1, -1, -1};
    const int first[7] = {4, 2, 7, 1, 3, 3, 3};
    model.forward({first, targets, 1, 7});
    const std::vector<double> reference(model.logits(), model.logits() + 4 * 9);
    const int second[7] = {4, 2, 7, 1, 8, 5, 6};
    model.forward({second, targets, 1, 7});
    for (int i = 0; i < 4 * 9; ++i) EXPECT_NEAR(model.logits()[i], reference[i], 1e-12);
  }
}

// Trainable particles: d loss / d particles through the causal attention of every layer.
TEST(DecoderParticleGradient, MatchesFiniteDifferencesForEveryParticleMap) {
  for (FeatureMapKind map :
       {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat,
        FeatureMapKind::hedgehog, FeatureMapKind::taylor, FeatureMapKind::rebased}) {
    ModelShape s = tiny_shape(AttentionKind::linear, map, false, 0);
    s.features = 6;  // hedgehog: 3 particles, D_φ = 6; taylor: d′ = 2, D_φ = 1 + 2 + 3
    if (map == FeatureMapKind::rebased) s.features = 7;  // d′ = 3, D_φ = 1 + 6: P, γ, β
    TransformerDecoder<double> model(s, 2, 7);
    move_from_initial_values(model);
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

// QK normalisation in the stacked decoder (MQAR's path): φ reads s_h q/‖q‖ and s_h k/‖k‖ of each
// head, s_h = layers.<l>.attention.qk_scale (1, heads), started at τ. The whole model's gradient —
// the fused q | k | v projection and every s_h among it — and the particles' against finite
// differences, untied and tied (keys read q's rows), in the hybrid too; then one layer's s_h moved
// from τ.
TEST(DecoderQkNormalisation, GradientOfTheProjectionsScalesAndParticlesMatchesFiniteDifferences) {
  struct QkCase {
    FeatureMapKind map;
    bool tied;
    int conv_kernel;
    const char* name;
  };
  for (const QkCase& c : {QkCase{FeatureMapKind::favor, false, 0, "favor"},
                          QkCase{FeatureMapKind::porf_softplus, true, 0, "softplus_tied"},
                          QkCase{FeatureMapKind::taylor, false, 3, "taylor_hybrid"}}) {
    ModelShape s = tiny_shape(AttentionKind::linear, c.map, c.tied, 0);
    s.features = 6;  // taylor: d′ = 2
    s.feature_map.qk_normalisation = true;
    s.feature_map.bandwidth = 0.7;
    s.conv_kernel = c.conv_kernel;
    TransformerDecoder<double> model(s, 2, 7);
    model.initialise_parameters(5);
    const int layer = c.conv_kernel > 0 ? 1 : 0;
    const ParameterTensor& scale =
        model.tensor("layers." + std::to_string(layer) + ".attention.qk_scale");
    ASSERT_EQ(scale.size(), 2u);
    EXPECT_FALSE(scale.decay);
    for (std::size_t h = 0; h < 2; ++h) EXPECT_EQ(model.parameters()[scale.offset + h], 0.7);
    EXPECT_EQ(model.feature_input_scale(), 1.0);  // τ enters once, as s_h's start
    move_from_initial_values(model);
    const int tokens[14] = {2, 3, 4, 5, 6, 7, 8, 1, 2, 2, 0, 3, 4, 5};
    const int targets[14] = {-1, 4, -1, 6, 7, -1, 1, 3, -1, -1, 8, -1, -1, 2};
    const DecoderBatch batch{tokens, targets, 2, 7};
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch, true);
    const std::vector<double> analytic = model.gradients(), analytic_p = model.particle_gradients();
    for (std::size_t h = 0; h < 2; ++h) EXPECT_NE(analytic[scale.offset + h], 0.0) << c.name;
    testing::expect_gradient(
        model.parameters(), analytic, [&] { return model.forward(batch); },
        std::string("dθ qk ") + c.name, 1e-7);
    testing::expect_gradient(
        model.particles(), analytic_p, [&] { return model.forward(batch); },
        std::string("dΩ qk ") + c.name, 1e-7);
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
// Softmax attention must learn it (loss below 0.1) within 400 AdamW steps from one of a few
// initialisations; uniform attention cannot tell the pairs apart and stays above 0.5. When an
// initialisation leaves the ln 2 plateau is chaotic: seed 11 ends its 400 steps at 0.005 or at
// 0.12 depending on the last bits of the attention's sums, seeds 12, 13 and 19 near 0.001, and
// the others on the plateau.
double train_recall(AttentionKind attention, int conv_kernel = 0, int steps = 400,
                    double learning_rate = 3e-3, std::uint64_t seed = 11) {
  ModelShape s = tiny_shape(attention, FeatureMapKind::favor, false, 0);
  s.conv_kernel = conv_kernel;
  s.position_embedding = conv_kernel == 0;
  s.vocabulary = 8;
  s.max_length = 6;
  s.d_model = 32;
  s.heads = 1;
  s.features = 32;
  const int B = 32, L = 6;
  TransformerDecoder<float> model(s, B, L);
  model.initialise_parameters(seed);
  AdamW<float> optimiser(model.weight_decay_mask(), {learning_rate, 0.9, 0.999, 1e-8, 0.0});
  RandomStream stream(13, RandomPurpose::test_inputs, 0, 0);
  std::vector<int> tokens(B * L), targets(B * L);
  double recent = 0.0;
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
    optimiser.step(model.parameters(), model.gradients(), learning_rate);
    if (step > steps - 20) recent += loss / 20;
  }
  return recent;
}

TEST(DecoderTraining, SoftmaxLearnsATinyRecallTaskThatUniformAttentionCannot) {
  double best = 1e300;
  for (std::uint64_t seed = 11; seed < 17 && best >= 0.1; ++seed)
    best = std::min(best, train_recall(AttentionKind::softmax, 0, 400, 3e-3, seed));
  EXPECT_LT(best, 0.1);
  EXPECT_GT(train_recall(AttentionKind::uniform), 0.5);
}

// The anchor's hybrid (BaseConv with k = 3, then softmax attention, no position embedding) learns
// it too, more slowly: BaseConv's gate W_p h + b_p starts near 0 (N(0, 0.02) weights, zero bias),
// so the convolution's gradient starts small, and many initialisations stay at the ln 2 plateau
// (both values of the sequence equally likely) for thousands of steps. Which ones do is chaotic
// (the last bit of a sum moves it): of the seeds 11 … 22, two fall below 0.1 within 1000 steps
// and two more below 0.15. One of the seeds 11 … 34 must fall below 0.1 (the first that does ends
// the test).
TEST(DecoderTraining, TheConvolutionHybridLearnsTheTinyRecallTask) {
  double best = 1e300;
  for (std::uint64_t seed = 11; seed < 35 && best >= 0.1; ++seed)
    best = std::min(best, train_recall(AttentionKind::softmax, 3, 1000, 1e-2, seed));
  EXPECT_LT(best, 0.1);
}

}  // namespace
}  // namespace cpm
