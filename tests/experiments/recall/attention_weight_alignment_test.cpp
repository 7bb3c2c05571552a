// Phase A's potential for the recall tasks: its gradient against finite differences, its zero at
// targets that φ reproduces, the softmax targets, and favor's kernel converging to exp(xᵀy).
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>

#include "core/feature_initialisation.hpp"
#include "experiments/recall/attention_weight_alignment.hpp"
#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

using testing_support::random_matrix;

// Three queries over ranges of six keys (overlapping, of lengths 4, 6, 2), softmax targets.
AttentionTargets small_problem(double scale) {
  AttentionTargets t;
  t.queries = random_matrix(3, 4, scale, 1);
  t.keys = random_matrix(6, 4, scale, 2);
  t.key_begin = {0, 0, 3};
  t.key_end = {4, 6, 5};
  set_softmax_targets(t);
  return t;
}

TEST(AttentionWeightAlignment, SoftmaxTargetsAreTheNormalisedExactKernel) {
  const AttentionTargets t = small_problem(0.6);
  ASSERT_EQ(t.pairs(), 12);
  Eigen::Index p = 0;
  for (Eigen::Index a = 0; a < 3; ++a) {
    double total = 0.0;
    for (Eigen::Index i = t.key_begin[a]; i < t.key_end[a]; ++i)
      total += std::exp(t.queries.row(a).dot(t.keys.row(i)));
    for (Eigen::Index i = t.key_begin[a]; i < t.key_end[a]; ++i, ++p)
      EXPECT_NEAR(t.target[p], std::exp(t.queries.row(a).dot(t.keys.row(i))) / total, 1e-14);
  }
}

// The gradient of the potential at omega against central differences of step h of its total.
void expect_gradient_of_total(const AttentionWeightPotential& v, const Eigen::MatrixXd& omega,
                              double h) {
  Eigen::VectorXd value;
  Eigen::MatrixXd gradient;
  v.evaluate(omega, value, &gradient);
  for (Eigen::Index k = 0; k < omega.rows(); ++k)
    for (Eigen::Index a = 0; a < omega.cols(); ++a) {
      Eigen::MatrixXd plus = omega, minus = omega;
      plus(k, a) += h;
      minus(k, a) -= h;
      Eigen::VectorXd vp, vm;
      v.evaluate(plus, vp, nullptr);
      v.evaluate(minus, vm, nullptr);
      EXPECT_NEAR(gradient(k, a), (vp.sum() - vm.sum()) / (2 * h), 1e-8) << k << ", " << a;
    }
}

TEST(AttentionWeightAlignment, GradientMatchesFiniteDifferencesOfTheTotal) {
  expect_gradient_of_total(AttentionWeightPotential(small_problem(0.6), 0.8),
                           random_matrix(5, 4, 1.0, 3), 1e-6);
}

// 300 queries over sliding windows of 40 of 340 keys: blocks of queries whose key ranges overlap,
// so that each key's sum gathers terms from two blocks.
AttentionTargets sliding_windows() {
  AttentionTargets t;
  t.queries = random_matrix(300, 4, 0.5, 11);
  t.keys = random_matrix(340, 4, 0.5, 12);
  for (Eigen::Index a = 0; a < 300; ++a) {
    t.key_begin.push_back(a);
    t.key_end.push_back(a + 40);
  }
  set_softmax_targets(t);
  return t;
}

TEST(AttentionWeightAlignment, GradientOverOverlappingBlocksMatchesFiniteDifferences) {
  // h = 1e-5: the sum over 12,000 pairs rounds at about 1e-14
  expect_gradient_of_total(AttentionWeightPotential(sliding_windows(), 1.0),
                           random_matrix(6, 4, 1.0, 13), 1e-5);
}

TEST(AttentionWeightAlignment, NormalisedKeysGradientMatchesFiniteDifferences) {
  for (KeyNormalisation keys : {KeyNormalisation::l2, KeyNormalisation::l1}) {
    SCOPED_TRACE(key_normalisation_name(keys));
    expect_gradient_of_total(AttentionWeightPotential(small_problem(0.6), 0.8, keys),
                             random_matrix(5, 4, 1.0, 3), 1e-6);
    expect_gradient_of_total(AttentionWeightPotential(sliding_windows(), 1.0, keys),
                             random_matrix(6, 4, 1.0, 13), 1e-5);
  }
}

// With normalised keys the weights are those of φ(x)ᵀφ(y_i)/‖φ(y_i)‖ with favor's features
// φ_k(x) = exp(ω_kᵀx − |x|²/2) written out: the alignment is the mean KL to them.
TEST(AttentionWeightAlignment, NormalisedKeysWeighTheFeaturesDividedByTheirLength) {
  const AttentionTargets t = small_problem(0.6);
  const Eigen::MatrixXd omega = random_matrix(5, 4, 1.0, 3);
  auto phi = [&](const Eigen::VectorXd& x) {
    return ((omega * x).array() - 0.5 * x.squaredNorm()).exp().matrix().eval();
  };
  for (KeyNormalisation keys : {KeyNormalisation::l2, KeyNormalisation::l1}) {
    double kl = 0.0;
    for (Eigen::Index a = 0, p = 0; a < 3; ++a) {
      Eigen::VectorXd w(t.key_end[a] - t.key_begin[a]);
      for (Eigen::Index i = t.key_begin[a]; i < t.key_end[a]; ++i) {
        const Eigen::VectorXd f = phi(t.keys.row(i).transpose());
        const double n = keys == KeyNormalisation::l2 ? f.norm() : f.sum();
        w[i - t.key_begin[a]] = phi(t.queries.row(a).transpose()).dot(f) / n;
      }
      w /= w.sum();
      for (Eigen::Index j = 0; j < w.size(); ++j, ++p)
        if (t.target[p] > 0.0) kl += t.target[p] * std::log(t.target[p] / w[j]);
    }
    EXPECT_NEAR(AttentionWeightPotential(t, 1.0, keys).alignment(omega), kl / 3.0, 1e-12)
        << key_normalisation_name(keys);
  }
}

TEST(AttentionWeightAlignment, VanishesWhereTheFeaturesReproduceTheTargets) {
  AttentionTargets t = small_problem(0.6);
  const Eigen::MatrixXd omega = random_matrix(5, 4, 1.0, 4);
  // Targets = the linear weights â of these particles, computed directly.
  Eigen::Index p = 0;
  for (Eigen::Index a = 0; a < 3; ++a) {
    Eigen::VectorXd k(t.key_end[a] - t.key_begin[a]);
    for (Eigen::Index i = t.key_begin[a]; i < t.key_end[a]; ++i) {
      const Eigen::RowVectorXd u = t.queries.row(a) + t.keys.row(i);
      k[i - t.key_begin[a]] =
          ((omega * u.transpose()).array() - 0.5 * t.queries.row(a).squaredNorm() -
           0.5 * t.keys.row(i).squaredNorm())
              .exp()
              .sum();
    }
    t.target.segment(p, k.size()) = k / k.sum();
    p += k.size();
  }
  const AttentionWeightPotential v(t, 1.0);
  EXPECT_NEAR(v.alignment(omega), 0.0, 1e-13);
  Eigen::VectorXd value;
  Eigen::MatrixXd gradient;
  v.evaluate(omega, value, &gradient);
  EXPECT_LT(gradient.norm(), 1e-13);
  // Elsewhere the KL divergence is positive.
  EXPECT_GT(v.alignment(random_matrix(5, 4, 1.0, 5)), 1e-4);
}

TEST(AttentionWeightAlignment, GaussianParticlesApproachTheSoftmaxTargetsLikeOneOverM) {
  const AttentionWeightPotential v(small_problem(0.5), 1.0);
  // E[exp(ωᵀu − |x|²/2 − |y|²/2)] = exp(xᵀy) for ω ~ N(0, I): the KL falls like 1/m.
  const double few = v.alignment(gaussian_features(64, 4, 1.0, 7, 0));
  const double many = v.alignment(gaussian_features(16384, 4, 1.0, 7, 0));
  EXPECT_GT(few, 0.0);
  EXPECT_LT(many, few / 30.0);
  EXPECT_LT(many, 1e-3);
}

TEST(AttentionWeightAlignment, RefusesInconsistentTargets) {
  AttentionTargets t = small_problem(0.6);
  t.target[0] += 0.1;
  EXPECT_THROW(AttentionWeightPotential(t, 1.0), std::invalid_argument);
  t = small_problem(0.6);
  t.key_end[2] = t.key_begin[2];
  EXPECT_THROW(AttentionWeightPotential(t, 1.0), std::invalid_argument);
}

TEST(AttentionWeightAlignment, SameResultOnOneAndTwoThreads) {
  // Blocks of queries whose key ranges overlap, summed in block order.
  const AttentionWeightPotential v(sliding_windows(), 1.0);
  const Eigen::MatrixXd omega = random_matrix(6, 4, 1.0, 10);
  Eigen::VectorXd value1, value2;
  Eigen::MatrixXd gradient1, gradient2;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  v.evaluate(omega, value1, &gradient1);
  omp_set_num_threads(2);
  v.evaluate(omega, value2, &gradient2);
  omp_set_num_threads(threads);
  EXPECT_EQ(value1, value2);
  EXPECT_EQ(gradient1, gradient2);
}

}  // namespace
}  // namespace cpm
