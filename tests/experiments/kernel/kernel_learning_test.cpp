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

// The prior anchor V₀ = |ω|²/(2σ²β) at finite β and λ = 0: each particle is an independent
// Langevin diffusion whose stationary law is the prior N(0, σ²) tilted by exp(βγ‖m(ω)‖²)
// (docs/model.md §1). Two data points x = ±δ with labels ±1 and the cos/sin pairs give
// ‖m(ω)‖² = sin²(ωδ) exactly, so the law is ∝ exp(−ω²/(2σ²) + βγ sin²(ωδ)); for small δ it tends
// to the Gaussian of variance 1/(1/σ² − 2βγδ²). The second moment of 4,000 particles after
// 1,600 steps matches the quadrature of the closed form within four standard errors, and is far
// from both the prior's σ² and the law of an anchor without the factor 1/β.
TEST(KernelLearning, AnchoredLangevinSamplesThePriorTiltedByTheAlignment) {
  const double delta = 0.5, beta = 4.0, gamma = 0.25, sigma = 1.0;
  auto x = std::make_shared<const Eigen::MatrixXd>(Eigen::Vector2d(delta, -delta));
  Eigen::VectorXi labels(2);
  labels << 1, 0;
  const Eigen::MatrixXd targets = alignment_targets(labels, 2);
  LearningSettings s;
  s.alignment = {gamma, true, 0, 1};
  s.relative_gamma = false;
  s.anchor = true;
  s.prior_scale = sigma;
  s.repulsion.lambda = 0.0;
  s.dynamics.beta = beta;
  s.dynamics.step = 0.05;
  s.dynamics.steps = 1600;
  s.record_every = 1600;
  s.seed = 3;
  const Eigen::Index n = 4000;
  LearningReport report;
  const Eigen::MatrixXd w =
      learn_particles(x, targets, FeatureMap::rff_pairs(), gaussian_features(n, 1, sigma, 4), s,
                      nullptr, {}, &report);
  EXPECT_NEAR(report.anchor_precision, 1.0 / (sigma * sigma * beta), 1e-15);
  const Eigen::ArrayXd w2 = w.col(0).array().square();
  const double m2 = w2.mean();
  const double se = std::sqrt((w2 - m2).square().sum() / double(n - 1) / double(n));
  // ∫ ω^p exp(−ω²/(2σ²) + βγ sin²(ωδ)) dω by Simpson's rule on [−20, 20].
  auto moment = [&](int p) {
    const int cells = 40000;
    const double a = -20.0, h = 40.0 / cells;
    double sum = 0.0;
    for (int i = 0; i <= cells; ++i) {
      const double v = a + i * h, wgt = (i == 0 || i == cells) ? 1.0 : (i % 2 ? 4.0 : 2.0);
      sum +=
          wgt * std::pow(v, p) *
          std::exp(-v * v / (2 * sigma * sigma) + beta * gamma * std::pow(std::sin(v * delta), 2));
    }
    return sum * h / 3.0;
  };
  const double exact = moment(2) / moment(0);
  std::printf("anchored Langevin: E w^2 = %.4f +- %.4f, tilted law %.4f, prior %.1f\n", m2, se,
              exact, sigma * sigma);
  EXPECT_NEAR(m2, exact, 4.0 * se);
  EXPECT_GT(std::abs(m2 - sigma * sigma), 10.0 * se);  // the tilt is visible
  // An anchor |ω|²/(2σ²) without 1/β would give about 1/(β/σ² − 2βγδ²) ≈ 0.29.
  EXPECT_GT(m2, 1.0 / (beta / (sigma * sigma) - 2 * beta * gamma * delta * delta) + 10.0 * se);
}

// drift_fraction sets λ so that the RMS repulsive drift is that fraction of the RMS alignment
// drift at the initial particles; relative_gamma makes the latter γ itself.
TEST(KernelLearning, DriftFractionSetsLambdaAndRelativeGammaSetsTheAlignmentDrift) {
  const DataSplit data = variance_task(4, 200, 5);
  auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
  const Eigen::MatrixXd targets = alignment_targets(data.train.y, 2);
  LearningSettings s;
  s.alignment = {0.7, true, 0, 1};
  s.relative_gamma = true;
  s.repulsion.kernel = InteractionKernel::mollified(3.0, 0.1);
  s.drift_fraction = 0.25;
  s.dynamics.steps = 5;
  s.dynamics.step = 0.1;
  LearningReport r;
  learn_particles(x, targets, FeatureMap::rff_pairs(), gaussian_features(32, 4, 1.0, 6), s, nullptr,
                  {}, &r);
  EXPECT_NEAR(r.alignment_drift, 0.7, 1e-12);
  EXPECT_GT(r.lambda, 0.0);
  EXPECT_NEAR(r.repulsion_ratio_initial, 0.25, 1e-12);
  EXPECT_GT(r.repulsion_ratio_final, 0.0);
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
