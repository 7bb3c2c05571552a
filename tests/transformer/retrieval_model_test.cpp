// The associative-retrieval model: its gradient against finite differences (double, every
// attention kind), the read-out as a normalised weighting of the value one-hots, and training that
// retrieves.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/feature_initialisation.hpp"
#include "tests/transformer/finite_difference.hpp"
#include "transformer/adamw.hpp"
#include "transformer/retrieval_model.hpp"

namespace cpm {
namespace {

RetrievalShape tiny_shape(AttentionKind attention, FeatureMapKind map, int features) {
  RetrievalShape s;
  s.keys = 6;
  s.values = 5;
  s.pairs = 4;
  s.embedding = 7;
  s.key_size = 6;
  s.attention = attention;
  s.feature_map = {map, 0.0};
  s.features = features;
  s.delta = 0.0;  // favor's max-shift is held constant: with δ > 0 it would not cancel exactly
  return s;
}

template <class T>
void fill_particles(RetrievalModel<T>& model, std::uint64_t seed) {
  if (model.particle_rows() == 0) return;
  const Eigen::MatrixXd w =
      gaussian_features(model.particle_rows(), model.shape().key_size, 0.5, seed);
  for (Eigen::Index r = 0; r < w.rows(); ++r)
    for (Eigen::Index a = 0; a < w.cols(); ++a)
      model.particles()[r * w.cols() + a] = static_cast<T>(w(r, a));
}

// Two examples of S = 4 pairs over 6 key and 5 value symbols.
const int kKeys[8] = {0, 3, 5, 1, 2, 4, 1, 0};
const int kValues[8] = {4, 0, 2, 3, 1, 3, 0, 4};
const int kQuery[2] = {5, 1};
const int kTarget[2] = {2, 0};

struct Case {
  AttentionKind attention;
  FeatureMapKind map;
  int features;
  const char* name;
  FeatureInput input = FeatureInput::fixed;
  double bandwidth = 1.0;
  KeyNormalisation keys = KeyNormalisation::none;
};

class RetrievalGradient : public ::testing::TestWithParam<Case> {};

TEST_P(RetrievalGradient, GradientMatchesFiniteDifferences) {
  const Case c = GetParam();
  RetrievalShape shape = tiny_shape(c.attention, c.map, c.features);
  shape.feature_input = c.input;
  shape.feature_map.bandwidth = c.bandwidth;
  shape.feature_map.key_normalisation = c.keys;
  RetrievalModel<double> model(shape, 2);
  model.initialise_parameters(3);
  if (c.input == FeatureInput::metric)  // away from I, so that Mᵀ and M differ
    for (int i = 0; i < 36; ++i)
      model.parameters()[model.parameters().size() - 36 + i] += 0.1 * std::sin(i);
  if (c.input == FeatureInput::temperature) model.parameters().back() = 0.8;
  fill_particles(model, 4);
  const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
  model.zero_gradients();
  model.forward(batch);
  model.backward(batch);
  std::vector<double> analytic = model.gradients();
  testing::expect_gradient(
      model.parameters(), analytic, [&] { return model.forward(batch); },
      std::string("dθ ") + c.name, 1e-7);
}

INSTANTIATE_TEST_SUITE_P(
    EveryAttention, RetrievalGradient,
    ::testing::Values(Case{AttentionKind::softmax, FeatureMapKind::favor, 1, "softmax"},
                      Case{AttentionKind::uniform, FeatureMapKind::favor, 1, "uniform"},
                      Case{AttentionKind::linear, FeatureMapKind::favor, 8, "favor"},
                      Case{AttentionKind::linear, FeatureMapKind::porf_softplus, 8, "softplus"},
                      Case{AttentionKind::linear, FeatureMapKind::softmaxfeat, 8, "softmaxfeat"},
                      Case{AttentionKind::linear, FeatureMapKind::favor, 8, "favor_bandwidth",
                           FeatureInput::fixed, 0.6},
                      Case{AttentionKind::linear, FeatureMapKind::favor, 8, "favor_temperature",
                           FeatureInput::temperature, 0.6},
                      Case{AttentionKind::linear, FeatureMapKind::favor, 8, "favor_metric",
                           FeatureInput::metric, 0.6},
                      Case{AttentionKind::linear, FeatureMapKind::porf_softplus, 8,
                           "softplus_metric", FeatureInput::metric, 1.3},
                      Case{AttentionKind::linear, FeatureMapKind::favor, 8, "favor_keys_l2",
                           FeatureInput::fixed, 0.6, KeyNormalisation::l2},
                      Case{AttentionKind::linear, FeatureMapKind::porf_softplus, 8,
                           "softplus_metric_keys_l1", FeatureInput::metric, 1.3,
                           KeyNormalisation::l1}),
    [](const auto& info) { return std::string(info.param.name); });

// Trainable particles: d loss / d particles of the read-out weights.
TEST(RetrievalParticleGradient, MatchesFiniteDifferencesForEveryParticleMap) {
  for (const auto& [map, keys] : {std::pair{FeatureMapKind::favor, KeyNormalisation::none},
                                  std::pair{FeatureMapKind::porf_softplus, KeyNormalisation::none},
                                  std::pair{FeatureMapKind::softmaxfeat, KeyNormalisation::none},
                                  std::pair{FeatureMapKind::hedgehog, KeyNormalisation::none},
                                  std::pair{FeatureMapKind::favor, KeyNormalisation::l2},
                                  std::pair{FeatureMapKind::hedgehog, KeyNormalisation::l1}}) {
    RetrievalShape shape = tiny_shape(AttentionKind::linear, map, 8);
    shape.feature_map.key_normalisation = keys;
    RetrievalModel<double> model(shape, 2);
    model.initialise_parameters(3);
    fill_particles(model, 4);
    const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch, true);
    std::vector<double> analytic = model.particle_gradients();
    testing::expect_gradient(
        model.particles(), analytic, [&] { return model.forward(batch); },
        "dΩ " + feature_map_name(map) + " keys " + key_normalisation_name(keys), 1e-7);
  }
}

// The three ways of scaling φ's input agree: bandwidth τ, a learned temperature t = τ and a
// learned metric M = τ I give the same read-out as each other.
TEST(RetrievalFeatureInput, BandwidthTemperatureAndMetricScaleAlike) {
  const double tau = 0.45;
  const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
  auto loss = [&](FeatureInput input, double bandwidth) {
    RetrievalShape shape = tiny_shape(AttentionKind::linear, FeatureMapKind::favor, 8);
    shape.feature_input = input;
    shape.feature_map.bandwidth = bandwidth;
    RetrievalModel<double> model(shape, 2);
    model.initialise_parameters(3);
    fill_particles(model, 4);
    if (input == FeatureInput::temperature) model.parameters().back() = tau;
    if (input == FeatureInput::metric)
      for (int a = 0; a < 6; ++a) model.parameters()[model.parameters().size() - 36 + 7 * a] = tau;
    return model.forward(batch);
  };
  const double reference = loss(FeatureInput::fixed, tau);
  EXPECT_NE(reference, loss(FeatureInput::fixed, 1.0));
  EXPECT_NEAR(loss(FeatureInput::temperature, 1.0), reference, 1e-14);
  EXPECT_NEAR(loss(FeatureInput::metric, 1.0), reference, 1e-14);
}

// The projected maps (taylor, rebased, projected dpfp) with P trainable (and rebased's γ, β): dθ
// and dP against finite differences, d′ below and above d_key = 6.
TEST(RetrievalParticleGradient, MatchesFiniteDifferencesForTheProjectedMaps) {
  struct Projected {
    FeatureMapSpec spec;
    int d;  // d′
  };
  for (const Projected& c :
       {Projected{{FeatureMapKind::taylor, 0.0}, 3}, Projected{{FeatureMapKind::taylor, 0.0}, 8},
        Projected{{FeatureMapKind::dpfp, 1e-6, 1, true}, 8},
        Projected{{FeatureMapKind::dpfp, 1e-6, 2, true}, 3},
        Projected{{FeatureMapKind::dpfp, 1e-6, 3, true}, 4},
        Projected{{FeatureMapKind::rebased, 1e-6}, 3},
        Projected{{FeatureMapKind::rebased, 0.0}, 8}}) {
    RetrievalShape shape = tiny_shape(AttentionKind::linear, c.spec.kind, 0);
    shape.feature_map = c.spec;
    const bool rebased = c.spec.kind == FeatureMapKind::rebased;  // P, γ and β in its block
    const int rows = rebased ? rebased_block_rows(c.d, shape.key_size) : c.d;
    shape.features = feature_dimension(c.spec, rows, shape.key_size);
    RetrievalModel<double> model(shape, 2);
    ASSERT_EQ(model.particle_rows(), rows);
    model.initialise_parameters(3);
    fill_particles(model, 4);
    const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch, true);
    std::vector<double> analytic = model.gradients(), analytic_p = model.particle_gradients();
    const std::string what =
        feature_map_name(c.spec.kind) +
        (c.spec.kind == FeatureMapKind::dpfp ? std::to_string(c.spec.dpfp_nu) + " projected" : "") +
        " d'=" + std::to_string(c.d);
    // rebased's LayerNorm of d′ = 3 entries curves the loss enough that central differences with
    // h = 1e-5 agree to 3e-7 only (truncation: 3e-9 with h = 1e-6).
    const double h = rebased ? 1e-6 : 1e-5;
    testing::expect_gradient(
        model.particles(), analytic_p, [&] { return model.forward(batch); }, "dP " + what, 1e-7, h);
    testing::expect_gradient(
        model.parameters(), analytic, [&] { return model.forward(batch); }, "dθ " + what, 1e-7, h);
  }
}

// QK normalisation: φ reads s q/‖q‖ and s k_j/‖k_j‖, s one learned scale. The loss against every
// parameter — the query projection W_q, b_q and s among them — and, for the trainable maps, the
// particles, against central finite differences in double, s away from τ so that its start does
// not matter.
TEST(RetrievalQkNormalisation, GradientOfTheQueryProjectionAndTheScaleMatchesFiniteDifferences) {
  for (const auto& [map, tau] :
       {std::pair{FeatureMapKind::favor, 0.6}, std::pair{FeatureMapKind::porf_softplus, 1.3},
        std::pair{FeatureMapKind::hedgehog, 0.8}}) {
    RetrievalShape shape = tiny_shape(AttentionKind::linear, map, 8);
    shape.feature_map.bandwidth = tau;
    shape.feature_map.qk_normalisation = true;
    RetrievalModel<double> model(shape, 2);
    model.initialise_parameters(3);
    ASSERT_EQ(model.qk_scale(), tau);
    model.parameters()[model.qk_scale_offset()] = 1.7;
    fill_particles(model, 4);
    const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch, true);
    const std::vector<double> analytic = model.gradients(), analytic_p = model.particle_gradients();
    EXPECT_NE(analytic[model.qk_scale_offset()], 0.0);
    const std::string what = "qk " + feature_map_name(map);
    testing::expect_gradient(
        model.parameters(), analytic, [&] { return model.forward(batch); }, "dθ " + what, 1e-7);
    testing::expect_gradient(
        model.particles(), analytic_p, [&] { return model.forward(batch); }, "dΩ " + what, 1e-7);
  }
}

// With QK normalisation τ only starts s: φ applies no scale of its own, so two models that differ
// in τ alone give the same loss once their s agree, and rescaling W_q and b_q (q's length) changes
// nothing, since φ reads q/‖q‖.
TEST(RetrievalQkNormalisation, TheBandwidthOnlyStartsTheScaleAndTheQueryLengthDropsOut) {
  const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
  auto model_at = [&](double tau) {
    RetrievalShape shape = tiny_shape(AttentionKind::linear, FeatureMapKind::favor, 8);
    shape.feature_map.bandwidth = tau;
    shape.feature_map.qk_normalisation = true;
    auto model = std::make_unique<RetrievalModel<double>>(shape, 2);
    model->initialise_parameters(3);
    fill_particles(*model, 4);
    return model;
  };
  auto a = model_at(0.4), b = model_at(0.9);
  EXPECT_NE(a->forward(batch), b->forward(batch));
  b->parameters()[b->qk_scale_offset()] = 0.4;
  const double reference = a->forward(batch);
  EXPECT_NEAR(b->forward(batch), reference, 1e-14);
  // W_q (d, e) and b_q (d) sit just before s (the model has no learned transform).
  const std::size_t d = 6, e = 7, s = a->qk_scale_offset();
  for (std::size_t i = s - d - d * e; i < s; ++i) a->parameters()[i] *= 3.0;
  EXPECT_NEAR(a->forward(batch), reference, 1e-13);
}

// s starts at τ and is trained with the other parameters: a few Adam steps move it.
TEST(RetrievalQkNormalisation, TheScaleStartsAtTheBandwidthAndMovesUnderTraining) {
  RetrievalShape shape = tiny_shape(AttentionKind::linear, FeatureMapKind::favor, 16);
  shape.feature_map.bandwidth = 0.5;
  shape.feature_map.qk_normalisation = true;
  RetrievalModel<float> model(shape, 2);
  model.initialise_parameters(3);
  fill_particles(model, 4);
  EXPECT_EQ(model.qk_scale(), 0.5f);
  AdamW<float> optimiser(model.weight_decay_mask(), {1e-2, 0.9, 0.999, 1e-8, 0.0});
  const RetrievalBatch batch{kKeys, kValues, kQuery, kTarget, 2};
  const double before = model.forward(batch);
  for (int step = 0; step < 20; ++step) {
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch);
    optimiser.step(model.parameters(), model.gradients(), 1e-2);
  }
  EXPECT_GT(std::abs(model.qk_scale() - 0.5f), 0.05f);  // 20 steps of at most ≈ 0.01 each
  EXPECT_LT(model.forward(batch), before);
}

// Uniform weights read out 1/S at every stored value; the loss is then ½((1 − 1/S)² + (S−1)/S²)
// = ½(1 − 1/S) per example.
TEST(RetrievalReadout, UniformWeightsGiveTheMeanOfTheValueOneHots) {
  RetrievalModel<double> model(tiny_shape(AttentionKind::uniform, FeatureMapKind::favor, 1), 2);
  model.initialise_parameters(1);
  const double loss = model.forward({kKeys, kValues, kQuery, kTarget, 2});
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(model.output(b)[kValues[4 * b + j]], 0.25, 1e-15);
  EXPECT_NEAR(loss, 0.5 * (1.0 - 0.25), 1e-15);
}

// Softmax attention retrieves S = 8 pairs (fresh examples every step) to accuracy 1 within 600
// Adam steps; chance is 1/8.
TEST(RetrievalTraining, SoftmaxLearnsToRetrieve) {
  RetrievalShape s = tiny_shape(AttentionKind::softmax, FeatureMapKind::favor, 1);
  s.keys = s.values = s.pairs = 8;
  s.embedding = 18;
  s.key_size = 16;
  const int B = 32, S = 8;
  RetrievalModel<float> model(s, B);
  model.initialise_parameters(2);
  AdamW<float> optimiser(model.weight_decay_mask(), {1e-2, 0.9, 0.999, 1e-8, 0.0});
  RandomStream stream(5, RandomPurpose::test_inputs, 0, 0);
  std::uint64_t draws = 0;
  std::vector<int> keys(B * S), values(B * S), query(B), target(B);
  auto draw = [&] {
    for (int b = 0; b < B; ++b) {
      const auto k = random_permutation(S, RandomStream(6, RandomPurpose::test_inputs, 0, ++draws));
      const auto v = random_permutation(S, RandomStream(6, RandomPurpose::test_inputs, 0, ++draws));
      for (int j = 0; j < S; ++j) {
        keys[b * S + j] = static_cast<int>(k[j]);
        values[b * S + j] = static_cast<int>(v[j]);
      }
      const int j = static_cast<int>(stream.uniform() * S);
      query[b] = keys[b * S + j];
      target[b] = values[b * S + j];
    }
    return RetrievalBatch{keys.data(), values.data(), query.data(), target.data(), B};
  };
  for (int step = 0; step < 600; ++step) {
    const RetrievalBatch batch = draw();
    model.zero_gradients();
    model.forward(batch);
    model.backward(batch);
    optimiser.step(model.parameters(), model.gradients(), 1e-2);
  }
  const RetrievalBatch batch = draw();
  model.forward(batch);
  int correct = 0;
  for (int b = 0; b < B; ++b) correct += model.prediction(b) == target[b];
  EXPECT_GE(correct, B - 1);
}

}  // namespace
}  // namespace cpm
