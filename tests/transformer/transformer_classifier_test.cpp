// The whole classifier: its gradient against finite differences (double, tiny configuration, every
// attention variant, with padding), padding that changes nothing, and training that learns.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/feature_initialisation.hpp"
#include "tests/transformer/finite_difference.hpp"
#include "transformer/adamw.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {
namespace {

ModelShape tiny_shape(AttentionKind attention, FeatureMapKind map, bool tied) {
  ModelShape s;
  s.vocabulary = 9;
  s.max_length = 6;
  s.d_model = 8;
  s.heads = 2;
  s.layers = 2;
  s.d_ff = 12;
  s.classes = 3;
  s.features = 5;
  s.attention = attention;
  s.feature_map = {map, 0.0};
  s.qk_tied = tied;
  s.dropout = 0.0;
  return s;
}

template <class T>
void fill_particles(TransformerClassifier<T>& model, std::uint64_t seed) {
  if (model.particles().empty()) return;  // softmax attention has none
  const ModelShape& s = model.shape();
  const Eigen::MatrixXd w =
      gaussian_features(s.layers * s.heads * s.features, s.head_size(), 1.0, seed);
  // Row-major (layers, heads, m, d_head): row r of w is particle r.
  for (Eigen::Index r = 0; r < w.rows(); ++r)
    for (Eigen::Index a = 0; a < w.cols(); ++a)
      model.particles()[r * w.cols() + a] = static_cast<T>(w(r, a));
}

struct Case {
  AttentionKind attention;
  FeatureMapKind map;
  bool tied;
  const char* name;
};

class ClassifierGradient : public ::testing::TestWithParam<Case> {};

TEST_P(ClassifierGradient, WholeModelGradientMatchesFiniteDifferences) {
  const Case c = GetParam();
  TransformerClassifier<double> model(tiny_shape(c.attention, c.map, c.tied), 3, 6);
  model.initialise_parameters(5);
  // Larger weights than the 0.02 of training so that every path carries a visible gradient.
  auto& theta = model.parameters();
  const auto noise = testing::random_vector(theta.size(), 6, 0.3);
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] += noise[i];
  fill_particles(model, 7);
  const int tokens[18] = {2, 3, 4, 5, 6, 7, 8, 2, 2, 0, 0, 0, 1, 5, 0, 0, 0, 0};
  const int lengths[3] = {6, 3, 2}, labels[3] = {0, 2, 1};
  const TokenBatch batch{tokens, lengths, labels, 3, 6};
  model.zero_gradients();
  model.forward(batch);
  model.backward(batch);
  std::vector<double> analytic = model.gradients();
  testing::expect_gradient(
      theta, analytic, [&] { return model.forward(batch); }, std::string("dθ ") + c.name, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    EveryAttention, ClassifierGradient,
    ::testing::Values(Case{AttentionKind::softmax, FeatureMapKind::favor, false, "softmax"},
                      Case{AttentionKind::softmax, FeatureMapKind::favor, true, "softmax_tied"},
                      Case{AttentionKind::linear, FeatureMapKind::favor, false, "favor"},
                      Case{AttentionKind::linear, FeatureMapKind::porf_softplus, false, "softplus"},
                      Case{AttentionKind::linear, FeatureMapKind::softmaxfeat, true,
                           "softmaxfeat_tied"},
                      Case{AttentionKind::uniform, FeatureMapKind::favor, false, "uniform"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(ClassifierPadding, PaddingTokensAndPaddedLengthDoNotChangeTheLogits) {
  for (AttentionKind kind :
       {AttentionKind::softmax, AttentionKind::linear, AttentionKind::uniform}) {
    TransformerClassifier<double> model(tiny_shape(kind, FeatureMapKind::favor, false), 2, 6);
    model.initialise_parameters(8);
    fill_particles(model, 9);
    const int alone[3] = {4, 2, 7};
    const int one[1] = {3};
    model.forward({alone, one, nullptr, 1, 3});
    const std::vector<double> reference(model.logits(), model.logits() + 3);
    // The same sequence padded to L = 6, next to a full-length one, with different padding tokens.
    for (int pad : {0, 5}) {
      const int tokens[12] = {4, 2, 7, pad, pad, pad, 1, 2, 3, 4, 5, 6};
      const int lengths[2] = {3, 6};
      model.forward({tokens, lengths, nullptr, 2, 6});
      for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(model.logits()[k], reference[k], 1e-12) << "pad token " << pad;
    }
  }
}

// A tiny synthetic task: random words 3..8; label 1 when word 2 occurs. AdamW must bring the mean
// training loss of the last 20 steps below 0.15 within 120 steps (chance level is log 2 ≈ 0.69).
double train_on_synthetic_task(AttentionKind attention, FeatureMapKind map) {
  ModelShape shape = tiny_shape(attention, map, false);
  shape.classes = 2;
  shape.max_length = 10;
  shape.d_model = 16;
  shape.d_ff = 32;
  shape.features = 16;
  shape.feature_map.epsilon = 1e-6;
  shape.dropout = 0.0;
  const int B = 16, L = 10;
  TransformerClassifier<float> model(shape, B, L);
  model.initialise_parameters(11);
  fill_particles(model, 12);
  AdamW<float> optimiser(model.weight_decay_mask(), {3e-3, 0.9, 0.999, 1e-8, 0.0});
  std::vector<int> tokens(B * L), lengths(B), labels(B);
  double recent = 0.0;
  const int steps = 120;
  for (int step = 0; step < steps; ++step) {
    RandomStream s(13, RandomPurpose::test_inputs, 0, 0, step);
    for (int b = 0; b < B; ++b) {
      lengths[b] = 3 + static_cast<int>(s.uniform() * 8);
      labels[b] = s.uniform() < 0.5;
      for (int t = 0; t < L; ++t)
        tokens[b * L + t] = t < lengths[b] ? 3 + static_cast<int>(s.uniform() * 6) : 0;
      if (labels[b]) tokens[b * L + static_cast<int>(s.uniform() * lengths[b])] = 2;
    }
    const TokenBatch batch{tokens.data(), lengths.data(), labels.data(), B, L};
    model.zero_gradients();
    const double loss = model.forward(batch, true, step, 14);
    model.backward(batch);
    optimiser.step(model.parameters(), model.gradients(), 3e-3,
                   clip_scale(gradient_norm(model.gradients()), 1.0));
    if (step >= steps - 20) recent += loss / 20;
  }
  return recent;
}

TEST(ClassifierTraining, LossOnTinySyntheticTaskFallsBelowThreshold) {
  const double softmax = train_on_synthetic_task(AttentionKind::softmax, FeatureMapKind::favor);
  const double favor = train_on_synthetic_task(AttentionKind::linear, FeatureMapKind::favor);
  std::printf("  final training loss: softmax %.4f, linear favor %.4f (threshold 0.15)\n", softmax,
              favor);
  EXPECT_LT(softmax, 0.15);
  EXPECT_LT(favor, 0.15);
}

TEST(AdamWSchedule, WarmsUpLinearlyThenDecaysByCosineToTheFloor) {
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(1.0, 5, 10, 110), 0.5);
  EXPECT_DOUBLE_EQ(scheduled_learning_rate(1.0, 10, 10, 110), 1.0);
  EXPECT_NEAR(scheduled_learning_rate(1.0, 60, 10, 110, 0.1), 0.55, 1e-12);
  EXPECT_NEAR(scheduled_learning_rate(1.0, 110, 10, 110, 0.1), 0.1, 1e-12);
}

TEST(AdamWSchedule, FirstStepMovesEachParameterByTheLearningRate) {
  // With bias correction the first step is lr·g/(|g| + ε) = lr·sign(g), plus decay lr·λ·θ.
  AdamW<double> opt({1, 0}, {0.1, 0.9, 0.999, 1e-12, 0.5});
  std::vector<double> p = {1.0, 1.0}, g = {3.0, -2.0};
  opt.step(p, g, 0.1);
  EXPECT_NEAR(p[0], 1.0 - 0.1 * (1.0 + 0.5), 1e-9);
  EXPECT_NEAR(p[1], 1.0 + 0.1, 1e-9);
}

TEST(AdamWSchedule, ClippingScalesToTheMaximumNorm) {
  const std::vector<double> g = {3.0, 4.0};
  EXPECT_DOUBLE_EQ(gradient_norm(g), 5.0);
  EXPECT_DOUBLE_EQ(clip_scale(5.0, 1.0), 0.2);
  EXPECT_DOUBLE_EQ(clip_scale(0.5, 1.0), 1.0);  // within the maximum
  EXPECT_DOUBLE_EQ(clip_scale(5.0, 0.0), 1.0);  // no clipping
}

}  // namespace
}  // namespace cpm
