#include "physics/alignment.hpp"

#include <gtest/gtest.h>

#include <random>

#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

using testing_support::random_matrix;

Eigen::VectorXi random_labels(Eigen::Index n, int classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, classes - 1);
  Eigen::VectorXi y(n);
  for (Eigen::Index i = 0; i < n; ++i) y[i] = pick(rng);
  return y;
}

TEST(Alignment, TargetsAreSignedForTwoClassesAndOneHotOtherwise) {
  Eigen::VectorXi y(3);
  y << 1, 0, 1;
  EXPECT_EQ(alignment_targets(y, 2), Eigen::Vector3d(1, -1, 1));
  y << 2, 0, 1;
  Eigen::Matrix3d one_hot;
  one_hot << 0, 0, 1, 1, 0, 0, 0, 1, 0;
  EXPECT_EQ(alignment_targets(y, 3), one_hot);
  y << 0, 3, 1;
  EXPECT_THROW(alignment_targets(y, 3), std::invalid_argument);
}

// A = (1/N) Σ_k ‖m(ω_k)‖² equals the O(n²) double sum (1/n²) Σ_c Σ_ij T_ic T_jc K(x_i, x_j),
// for every map, binary and multi-class, plain and centred.
TEST(Alignment, AlignmentViaMomentsEqualsTheDoubleSumOverDataPairs) {
  const Eigen::MatrixXd x = random_matrix(40, 3, 0.8, 1), w = random_matrix(12, 3, 0.9, 2);
  for (const auto& name : feature_map_names()) {
    const FeatureMap map = FeatureMap::with_random_phases(feature_map_kind(name), 12, 3);
    for (int classes : {2, 4}) {
      for (bool centred : {false, true}) {
        Eigen::MatrixXd t = alignment_targets(random_labels(40, classes, 4), classes);
        if (centred) centre_targets(t);
        const double a = alignment(map, x, t, w), reference = alignment_double_sum(map, x, t, w);
        EXPECT_NEAR(a, reference, 1e-13 * (1.0 + std::abs(reference)))
            << name << " classes=" << classes << " centred=" << centred;
        EXPECT_GE(a, 0.0);
      }
    }
  }
}

// Centring the labels is centring the kernel: A_c = (1/n²) ⟨HKH, TTᵀ⟩, H = I − 11ᵀ/n.
TEST(Alignment, CentredAlignmentEqualsAlignmentOfTheCentredKernel) {
  const Eigen::MatrixXd x = random_matrix(30, 2, 1.0, 5), w = random_matrix(8, 2, 1.0, 6);
  const FeatureMap map(FeatureMapKind::porf_softplus);
  const Eigen::MatrixXd t = alignment_targets(random_labels(30, 3, 7), 3);
  Eigen::MatrixXd tc = t;
  centre_targets(tc);
  const Eigen::MatrixXd h =
      Eigen::MatrixXd::Identity(30, 30) - Eigen::MatrixXd::Constant(30, 30, 1.0 / 30);
  const Eigen::MatrixXd hkh = h * empirical_kernel(map, x, x, w) * h;
  EXPECT_NEAR(alignment(map, x, tc, w), (t.transpose() * hkh * t).trace() / 900.0, 1e-13);
}

// Σ_k V(ω_k) = −γ N A(Ω), and the potential's gradient equals a central difference of Σ_k V.
TEST(Alignment, PotentialValueIsMinusGammaAlignmentAndGradientEqualsFiniteDifferences) {
  auto x = std::make_shared<const Eigen::MatrixXd>(random_matrix(25, 3, 0.7, 8));
  const Eigen::MatrixXd w = random_matrix(6, 3, 0.8, 9);
  for (const auto& name : feature_map_names()) {
    for (bool centred : {false, true}) {
      const FeatureMap map = FeatureMap::with_random_phases(feature_map_kind(name), 6, 10);
      const Eigen::MatrixXd t = alignment_targets(random_labels(25, 2, 11), 2);
      AlignmentPotential v(x, t, map, {2.5, centred, 0, 1});
      Eigen::VectorXd value;
      Eigen::MatrixXd gradient;
      v.evaluate(w, value, &gradient);
      Eigen::MatrixXd tt = t;
      if (centred) centre_targets(tt);
      EXPECT_NEAR(value.sum(), -2.5 * 6 * alignment(map, *x, tt, w), 1e-12);
      auto total = [&](const Eigen::MatrixXd& ww) {
        Eigen::VectorXd vv;
        v.evaluate(ww, vv, nullptr);
        return vv.sum();
      };
      const double h = 1e-6;
      for (Eigen::Index k = 0; k < 6; ++k)
        for (Eigen::Index a = 0; a < 3; ++a) {
          Eigen::MatrixXd wp = w, wm = w;
          wp(k, a) += h;
          wm(k, a) -= h;
          const double fd = (total(wp) - total(wm)) / (2 * h);
          EXPECT_NEAR(gradient(k, a), fd, 1e-7 * (1.0 + std::abs(fd))) << name;
        }
    }
  }
}

// Every objective (one-body alignment, normalised, squared loss), with and without the prior
// anchor, for every map including the cos/sin pairs: Σ_k V(ω_k) = −γ N J(Ω) + Σ_k c|ω_k|²/2,
// and the gradient equals central differences of that total in double precision.
TEST(Alignment, EveryObjectiveWithAndWithoutAnchorHasTheGradientOfItsTotal) {
  auto x = std::make_shared<const Eigen::MatrixXd>(random_matrix(25, 3, 0.7, 8));
  const Eigen::MatrixXd w = random_matrix(6, 3, 0.8, 9);
  std::vector<std::string> names = kernel_feature_map_names();
  for (const auto& objective_name : alignment_objective_names()) {
    const AlignmentObjective objective = alignment_objective_kind(objective_name);
    for (const auto& name : names) {
      for (double anchor : {0.0, 0.7}) {
        const FeatureMap map = FeatureMap::by_name(name, 6, 10);
        for (int classes : {2, 3}) {
          const Eigen::MatrixXd t = alignment_targets(random_labels(25, classes, 11), classes);
          AlignmentPotential v(x, t, map, {1.5, true, 0, 1, objective, 0.8, anchor});
          Eigen::VectorXd value;
          Eigen::MatrixXd gradient;
          v.evaluate(w, value, &gradient);
          Eigen::MatrixXd tt = t;
          centre_targets(tt);
          const double j = alignment_objective(map, *x, tt, w, objective, 0.8);
          const double expected = -1.5 * 6 * j + 0.5 * anchor * w.squaredNorm();
          EXPECT_NEAR(value.sum(), expected, 1e-12 * (1.0 + std::abs(expected)))
              << objective_name << " " << name;
          auto total = [&](const Eigen::MatrixXd& ww) {
            Eigen::VectorXd vv;
            v.evaluate(ww, vv, nullptr);
            return vv.sum();
          };
          const double h = 1e-6;
          for (Eigen::Index k = 0; k < 6; ++k)
            for (Eigen::Index a = 0; a < 3; ++a) {
              Eigen::MatrixXd wp = w, wm = w;
              wp(k, a) += h;
              wm(k, a) -= h;
              const double fd = (total(wp) - total(wm)) / (2 * h);
              EXPECT_NEAR(gradient(k, a), fd, 1e-7 * (1.0 + std::abs(fd)))
                  << objective_name << " " << name << " anchor " << anchor << " classes "
                  << classes;
            }
        }
      }
    }
  }
}

// The objectives by their definitions on the n × n kernel matrix: the normalised alignment is
// ⟨K, TTᵀ⟩/(‖K‖‖TTᵀ‖), bilinear in K and TTᵀ over their norms, so unchanged when either is
// scaled (checked by scaling the targets); the squared loss is
// (1/n²) Σ_ij (α (TTᵀ)_ij − K_ij)² = α²τ² − 2αJ.
TEST(Alignment, NormalisedAndSquaredLossObjectivesMatchTheirKernelMatrixDefinitions) {
  const Eigen::MatrixXd x = random_matrix(20, 2, 0.9, 30), w = random_matrix(7, 2, 1.0, 31);
  const Eigen::MatrixXd t = alignment_targets(random_labels(20, 2, 32), 2);
  for (const auto& name : kernel_feature_map_names()) {
    const FeatureMap map = FeatureMap::by_name(name, 7, 33);
    const Eigen::MatrixXd k = empirical_kernel(map, x, x, w), tt = t * t.transpose();
    const double normalised = (k.cwiseProduct(tt)).sum() / (k.norm() * tt.norm());
    EXPECT_NEAR(alignment_objective(map, x, t, w, AlignmentObjective::normalised), normalised,
                1e-12)
        << name;
    EXPECT_NEAR(alignment_objective(map, x, 3.0 * t, w, AlignmentObjective::normalised), normalised,
                1e-12);
    const double alpha = 0.6, n2 = 400.0;
    const double loss = (alpha * tt - k).squaredNorm() / n2;
    const double tau = (t.transpose() * t).norm() / 20.0;
    EXPECT_NEAR(loss,
                alpha * alpha * tau * tau -
                    2.0 * alpha *
                        alignment_objective(map, x, t, w, AlignmentObjective::squared_loss, alpha),
                1e-12)
        << name;
  }
}

// A mini-batch potential is the full-data potential of its batch's rows (targets centred over
// the batch); over one epoch the batches partition the data.
TEST(Alignment, MiniBatchPotentialIsThePotentialOfItsRowsAndAnEpochPartitionsTheData) {
  auto x = std::make_shared<const Eigen::MatrixXd>(random_matrix(24, 2, 1.0, 12));
  const Eigen::MatrixXd t = alignment_targets(random_labels(24, 3, 13), 3);
  const Eigen::MatrixXd w = random_matrix(5, 2, 1.0, 14);
  const FeatureMap map(FeatureMapKind::favor);
  AlignmentPotential v(x, t, map, {1.5, true, 8, 3});
  std::vector<int> seen(24, 0);
  for (std::uint64_t step = 0; step < 3; ++step) {
    v.select_batch(step);
    ASSERT_EQ(v.batch_rows(), 8);
    auto xb = std::make_shared<Eigen::MatrixXd>(8, 2);
    Eigen::MatrixXd tb(8, 3);
    for (int r = 0; r < 8; ++r) {
      const Eigen::Index i = v.batch_indices()[r];
      ++seen[i];
      xb->row(r) = x->row(i);
      tb.row(r) = t.row(i);
    }
    AlignmentPotential full(xb, tb, map, {1.5, true, 0, 3});
    Eigen::VectorXd value, expected;
    Eigen::MatrixXd gradient, expected_gradient;
    v.evaluate(w, value, &gradient);
    full.evaluate(w, expected, &expected_gradient);
    EXPECT_TRUE(value.isApprox(expected, 1e-14));
    EXPECT_TRUE(gradient.isApprox(expected_gradient, 1e-14));
  }
  for (int count : seen) EXPECT_EQ(count, 1);
  v.select_batch(3);  // the next epoch draws a new order
  std::vector<Eigen::Index> first_of_epoch_two = v.batch_indices();
  v.select_batch(0);
  EXPECT_NE(first_of_epoch_two, v.batch_indices());
}

}  // namespace
}  // namespace cpm
