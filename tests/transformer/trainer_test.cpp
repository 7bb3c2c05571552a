// Phase B's trainer: it learns a tiny task, and its result does not depend on the thread count
// nor on which count its ThreadGovernor chose for each step (docs/parallelism.md §2).
#include "transformer/trainer.hpp"

#include "transformer/classifier_batch_step.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include "core/feature_initialisation.hpp"
#include "core/random_stream.hpp"

namespace cpm {
namespace {

// Random words 3..8, label 1 when word 2 occurs.
SequenceSet synthetic_task(int examples) {
  SequenceSet data;
  RandomStream s(21, RandomPurpose::test_inputs, 0, 0);
  for (int e = 0; e < examples; ++e) {
    const int length = 3 + static_cast<int>(s.uniform() * 8);
    std::vector<int> tokens(length);
    for (int& t : tokens) t = 3 + static_cast<int>(s.uniform() * 6);
    const int label = s.uniform() < 0.5;
    if (label) tokens[static_cast<int>(s.uniform() * length)] = 2;
    data.tokens.push_back(tokens);
    data.labels.push_back(label);
  }
  return data;
}

struct Trained {
  std::vector<float> parameters;
  double smoothed_loss;
};

Trained train(AttentionKind attention, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  ModelShape shape;
  shape.vocabulary = 9;
  shape.max_length = 10;
  shape.d_model = 16;
  shape.heads = 2;
  shape.layers = 2;
  shape.d_ff = 32;
  shape.classes = 2;
  shape.features = 16;
  shape.attention = attention;
  shape.feature_map = {FeatureMapKind::favor, 1e-6};
  shape.dropout = 0.1;  // dropout masks come from the step's stream, not from a thread's
  TransformerClassifier<float> model(shape, 16, 10);
  model.initialise_parameters(11);
  if (!model.particles().empty()) {
    const Eigen::MatrixXd w =
        gaussian_features(shape.layers * shape.heads * shape.features, shape.head_size(), 1.0, 12);
    for (Eigen::Index r = 0; r < w.rows(); ++r)
      for (Eigen::Index a = 0; a < w.cols(); ++a)
        model.particles()[r * w.cols() + a] = static_cast<float>(w(r, a));
  }
  const SequenceSet data = synthetic_task(480);
  TrainerSettings settings;
  settings.batch_size = 16;
  settings.learning_rate = 3e-3;
  settings.warmup_steps = 10;
  Trainer trainer(model, settings, 4 * steps_per_epoch(data.size(), settings.batch_size),
                  data.size());
  ClassifierBatchStep batch_step(model, data, settings.seed);
  for (int epoch = 0; epoch < 4; ++epoch) trainer.run_epoch(batch_step);
  omp_set_num_threads(saved);
  EXPECT_EQ(omp_get_max_threads(), saved);
  return {model.parameters(), trainer.smoothed_loss()};
}

class TrainerThreads : public ::testing::TestWithParam<AttentionKind> {};

TEST_P(TrainerThreads, LearnsAndGivesTheSameParametersOnOneAndTwoThreads) {
  const Trained one = train(GetParam(), 1);
  const Trained two = train(GetParam(), 2);
  EXPECT_LT(one.smoothed_loss, 0.3);  // chance level: log 2 ≈ 0.69
  ASSERT_EQ(one.parameters.size(), two.parameters.size());
  for (std::size_t i = 0; i < one.parameters.size(); ++i)
    ASSERT_EQ(one.parameters[i], two.parameters[i]) << "parameter " << i;
}

INSTANTIATE_TEST_SUITE_P(Attention, TrainerThreads,
                         ::testing::Values(AttentionKind::softmax, AttentionKind::linear));

}  // namespace
}  // namespace cpm
