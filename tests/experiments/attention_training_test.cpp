// The attention protocol's pieces: MCC, perturbations, Phase A raising the alignment of every head.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/feature_initialisation.hpp"
#include "core/random_stream.hpp"
#include "experiments/attention_evaluation.hpp"
#include "experiments/attention_phase_a.hpp"
#include "experiments/sequence_perturbation.hpp"
#include "transformer/tokenizer.hpp"

namespace cpm {
namespace {

TEST(AttentionEvaluation, MatthewsCorrelationMatchesTheBinaryFormula) {
  // tp = 3, tn = 2, fp = 1, fn = 2: (tp·tn − fp·fn) / √((tp+fp)(tp+fn)(tn+fp)(tn+fn)).
  Eigen::VectorXi y(8), p(8);
  y << 1, 1, 1, 1, 1, 0, 0, 0;
  p << 1, 1, 1, 0, 0, 0, 0, 1;
  const double expected = (3.0 * 2 - 1.0 * 2) / std::sqrt(4.0 * 5 * 3 * 4);
  EXPECT_NEAR(matthews_correlation(y, p, 2), expected, 1e-15);
  EXPECT_NEAR(matthews_correlation(y, y, 2), 1.0, 1e-15);
  EXPECT_EQ(matthews_correlation(y, Eigen::VectorXi::Ones(8), 2), 0.0);  // constant prediction
  Eigen::VectorXi y3(6), p3(6);
  y3 << 0, 1, 2, 0, 1, 2;
  EXPECT_NEAR(matthews_correlation(y3, y3, 3), 1.0, 1e-15);
}

TEST(SequencePerturbation, WordDropoutKeepsTheSeparatorAndAtLeastOneToken) {
  const std::vector<int> t = {5, 6, Tokenizer::kSeparator, 7, 8, 9, 10, 11, 12, 13};
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const auto d = word_dropout(t, 0.2, 1, i);
    EXPECT_NE(std::find(d.begin(), d.end(), Tokenizer::kSeparator), d.end());
    total += d.size();
  }
  // Nine droppable tokens, each kept with probability 0.8, plus the separator.
  EXPECT_NEAR(static_cast<double>(total) / 400, 1 + 9 * 0.8, 0.2);
  EXPECT_EQ(word_dropout({4}, 0.99, 1, 3).size(), 1u);
  EXPECT_EQ(word_dropout(t, 0.2, 1, 7), word_dropout(t, 0.2, 1, 7));
}

TEST(SequencePerturbation, AdjacentSwapsPermuteNeighboursOnly) {
  std::vector<int> t(50);
  std::iota(t.begin(), t.end(), 0);
  const auto s = adjacent_swaps(t, 0.3, 2, 0);
  auto sorted = s;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, t);
  int moved = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_LE(std::abs(s[i] - i), 1);
    moved += s[i] != i;
  }
  EXPECT_GT(moved, 0);
}

// Sequences of random words 3..10 whose label is whether word 2 occurs: after Phase A (gradient
// flow, β = ∞) the alignment A(Ω) of every head has grown.
TEST(PhaseA, LangevinOnTheAlignmentHamiltonianRaisesEveryHeadsAlignment) {
  for (FeatureMapKind map : {FeatureMapKind::favor, FeatureMapKind::softmaxfeat}) {
    ModelShape shape;
    shape.vocabulary = 12;
    shape.max_length = 8;
    shape.d_model = 16;
    shape.heads = 2;
    shape.layers = 2;
    shape.d_ff = 16;
    shape.features = 8;
    shape.feature_map = {map, 1e-6};
    shape.dropout = 0.0;
    TransformerClassifier<float> model(shape, 16, 8);
    model.initialise_parameters(1);
    for (auto& p : model.parameters()) p *= 5.0f;  // projected keys of order one
    const Eigen::MatrixXd w = gaussian_features(2 * 2 * 8, 8, 1.0, 2);
    for (Eigen::Index r = 0; r < w.rows(); ++r)
      for (int a = 0; a < 8; ++a) model.particles()[r * 8 + a] = static_cast<float>(w(r, a));
    SequenceSet data;
    RandomStream s(3, RandomPurpose::experiment, 0, 0);
    for (int i = 0; i < 60; ++i) {
      std::vector<int> t(3 + static_cast<int>(s.uniform() * 6));
      for (auto& v : t) v = 3 + static_cast<int>(s.uniform() * 8);
      const int label = i % 2;
      if (label) t[0] = 2;
      data.tokens.push_back(t);
      data.labels.push_back(label);
    }
    PhaseAConfig config;
    config.steps = 30;
    config.step = 0.02;
    config.gamma = 2.0;
    config.radius = 3.0;  // favor's alignment grows without bound along x: keep D bounded
    config.lambda = 1e-3;
    config.sequences = 60;
    const auto report = run_phase_a(model, data, 2, config, 4, 16, false);
    ASSERT_EQ(report.size(), 4u);
    for (const auto& h : report) {
      std::printf("  %s layer %d head %d: alignment %.3e -> %.3e\n", feature_map_name(map).c_str(),
                  h.layer, h.head, h.before, h.after);
      EXPECT_GT(h.after, h.before);
    }
  }
}

}  // namespace
}  // namespace cpm
