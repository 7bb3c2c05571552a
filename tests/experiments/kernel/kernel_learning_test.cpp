#include "experiments/kernel/kernel_learning.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/feature_initialisation.hpp"
#include "learning/synthetic_tasks.hpp"

namespace cpm {
namespace {

DataSplit variance_task(int dim, Eigen::Index n, std::uint64_t seed) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::variance;
  t.dim = dim;
  t.train_size = n;
  return make_synthetic_task(t, seed);
}

// With λ = 0 and β = ∞ the dynamics is projected gradient ascent of γ A(Ω); for a small step
// the alignment must not decrease at any step, for every feature map.
TEST(KernelLearning, AlignmentIsNonDecreasingAlongTheNoiselessFlowWithoutRepulsion) {
  const DataSplit data = variance_task(3, 300, 2);
  auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
  const Eigen::MatrixXd targets = alignment_targets(data.train.y, 2);
  for (const auto& name : feature_map_names()) {
    const FeatureMap map = FeatureMap::with_random_phases(feature_map_kind(name), 16, 3);
    LearningSettings s;
    s.alignment = {1.0, true, 0, 1};
    s.repulsion.lambda = 0.0;
    s.dynamics.step = 0.05;
    s.dynamics.steps = 60;
    s.record_every = 1;
    s.radius = 3.0;  // favor grows without bound: the wall keeps the problem compact
    std::vector<TrainingRecord> trace;
    learn_particles(x, targets, map, gaussian_features(16, 3, 1.0, 4), s, &trace);
    ASSERT_EQ(trace.size(), 61u);
    for (std::size_t t = 1; t < trace.size(); ++t)
      EXPECT_GE(trace[t].alignment, trace[t - 1].alignment - 1e-14 * trace[t - 1].alignment)
          << name << " step " << t;
    EXPECT_GT(trace.back().alignment, trace.front().alignment) << name;
  }
}

// A task with one best direction (y = [x_1 > 0]) and a positive feature map: without
// repulsion the particles gather on the two maximisers ±R e_1 of m(ω)² and the minimum
// pairwise distance collapses; the Riesz repulsion keeps them apart.
TEST(KernelLearning, RepulsionKeepsTheMinimumPairwiseDistanceAwayFromZeroWhereLambdaZeroCollapses) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::variance;  // any inputs; labels replaced below
  t.dim = 2;
  t.train_size = 400;
  DataSplit data = make_synthetic_task(t, 5);
  for (Eigen::Index i = 0; i < data.train.size(); ++i) data.train.y[i] = data.train.x(i, 0) > 0.0;
  auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
  const Eigen::MatrixXd targets = alignment_targets(data.train.y, 2);
  const FeatureMap map(FeatureMapKind::porf_softplus);
  const Eigen::MatrixXd initial = gaussian_features(8, 2, 1.0, 6);
  double final_min[2];
  for (int with_repulsion = 0; with_repulsion < 2; ++with_repulsion) {
    LearningSettings s;
    s.alignment = {1.0, true, 0, 1};
    s.repulsion.kernel = InteractionKernel::power(1.0);
    s.repulsion.lambda = with_repulsion ? 0.05 : 0.0;
    s.dynamics.step = 0.5;
    s.dynamics.steps = 400;
    s.radius = 2.0;
    s.record_every = 50;
    std::vector<TrainingRecord> trace;
    learn_particles(x, targets, map, initial, s, &trace);
    final_min[with_repulsion] = trace.back().distances.min;
    if (with_repulsion) {
      for (const auto& r : trace) EXPECT_GT(r.distances.min, 0.1) << "step " << r.step;
    }
  }
  std::printf(
      "minimum pairwise distance after 400 steps: %.3g (lambda = 0), %.3g (lambda = 0.05)\n",
      final_min[0], final_min[1]);
  EXPECT_LT(final_min[0], 1e-3);
  EXPECT_GT(final_min[1], 0.1);
}

TEST(KernelLearning, PairwiseDistancesOfAKnownConfiguration) {
  Eigen::MatrixXd w(3, 2);
  w << 0, 0, 3, 0, 0, 4;  // distances 3, 4, 5
  const PairwiseDistanceSummary s = pairwise_distances(w);
  EXPECT_NEAR(s.min, 3.0, 1e-12);
  EXPECT_NEAR(s.mean, 4.0, 1e-12);
}

// The χ²-constrained reweighting: a probability vector on the divergence boundary ρ that puts
// more mass on higher scores; ρ = 0 is uniform; a generous ρ gives the unconstrained optimum.
TEST(KernelLearning, ImportanceWeightsSatisfyTheChiSquareConstraintWithEquality) {
  const Eigen::VectorXd scores = gaussian_features(200, 1, 1.0, 7).array().square();
  for (double rho : {0.1, 1.0, 5.0}) {
    const Eigen::VectorXd q = importance_weights(scores, rho);
    EXPECT_NEAR(q.sum(), 1.0, 1e-12);
    EXPECT_GE(q.minCoeff(), 0.0);
    EXPECT_NEAR(chi_square_divergence_from_uniform(q), rho, 1e-6 * rho);
    for (Eigen::Index i = 0; i < 200; ++i)
      for (Eigen::Index j = 0; j < 200; ++j)
        if (scores[i] > scores[j]) {
          EXPECT_GE(q[i], q[j]);
        }
    // Reweighting raises the expected score above the uniform average.
    EXPECT_GT(q.dot(scores), scores.mean());
  }
  EXPECT_TRUE(importance_weights(scores, 0.0).isApproxToConstant(1.0 / 200, 1e-15));
}

TEST(KernelLearning, SampledIndicesFollowTheWeights) {
  Eigen::VectorXd q(3);
  q << 0.5, 0.3, 0.2;
  const auto idx = sample_indices(q, 60000, 3);
  Eigen::Vector3d freq = Eigen::Vector3d::Zero();
  for (Eigen::Index i : idx) freq[i] += 1.0 / 60000;
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(freq[j], q[j], 4.0 * std::sqrt(q[j] / 60000));
}

}  // namespace
}  // namespace cpm
