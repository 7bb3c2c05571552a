#include "physics/random_feature_maps.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

using testing_support::random_matrix;

// Central difference of a scalar function of a vector, coordinate a.
template <class F>
double central_difference(F&& f, Eigen::VectorXd v, Eigen::Index a, double h = 1e-6) {
  Eigen::VectorXd p = v, m = v;
  p[a] += h;
  m[a] -= h;
  return (f(p) - f(m)) / (2.0 * h);
}

template <class Feature>
void expect_pointwise_gradient_matches_finite_difference(const Feature& f) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Eigen::VectorXd x = random_matrix(4, 1, 0.7, seed);
    const Eigen::VectorXd w = random_matrix(4, 1, 0.9, seed + 100);
    const Eigen::VectorXd g = f.gradient(x, w);
    for (Eigen::Index a = 0; a < 4; ++a) {
      const double fd =
          central_difference([&](const Eigen::VectorXd& v) { return f.value(x, v); }, w, a);
      EXPECT_NEAR(g[a], fd, 1e-8 * (1.0 + std::abs(fd)));
    }
  }
}

TEST(FeatureMaps, PointwiseGradientsWithRespectToOmegaEqualFiniteDifferences) {
  expect_pointwise_gradient_matches_finite_difference(RffFeature{0.7});
  expect_pointwise_gradient_matches_finite_difference(FavorFeature{});
  expect_pointwise_gradient_matches_finite_difference(SoftplusFeature{});
}

TEST(FeatureMaps, SoftmaxFeatureGradientWithRespectToEveryParticleEqualsFiniteDifferences) {
  const Eigen::MatrixXd w = random_matrix(5, 3, 0.8, 7);
  const Eigen::VectorXd x = random_matrix(3, 1, 1.0, 8);
  const SoftmaxFeature f;
  for (Eigen::Index k = 0; k < 5; ++k) {
    const Eigen::MatrixXd g = f.gradient(x, w, k);
    for (Eigen::Index l = 0; l < 5; ++l)
      for (Eigen::Index a = 0; a < 3; ++a) {
        const double h = 1e-6;
        Eigen::MatrixXd wp = w, wm = w;
        wp(l, a) += h;
        wm(l, a) -= h;
        const double fd = (f.value(x, wp, k) - f.value(x, wm, k)) / (2 * h);
        EXPECT_NEAR(g(l, a), fd, 1e-9);
      }
  }
}

TEST(FeatureMaps, ClosedFormsAtKnownPoints) {
  const Eigen::Vector2d x(1.0, 2.0), w(0.5, -0.25);  // ωᵀx = 0
  EXPECT_NEAR(RffFeature{0.0}.value(x, w), std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(FavorFeature{}.value(x, w), std::exp(-2.5), 1e-15);
  EXPECT_NEAR(SoftplusFeature{}.value(x, w), std::log(2.0), 1e-15);
  EXPECT_NEAR(SoftplusFeature::activation(800.0), 800.0, 1e-12);  // no overflow
  EXPECT_NEAR(SoftplusFeature::activation(-800.0), 0.0, 1e-300);
  Eigen::MatrixXd two(2, 2);
  two << 0.5, -0.25, 1.0, 0.0;  // z = (0, 1)
  EXPECT_NEAR(SoftmaxFeature{}.value(x, two, 1), std::exp(1.0) / (1.0 + std::exp(1.0)), 1e-15);
}

// The batched fast path reproduces the pointwise reference types entry by entry.
TEST(FeatureMaps, BatchedForwardEqualsPointwiseValues) {
  const Eigen::MatrixXd x = random_matrix(9, 4, 0.6, 1), w = random_matrix(6, 4, 0.8, 2);
  for (const auto& name : feature_map_names()) {
    const FeatureMap map = FeatureMap::with_random_phases(feature_map_kind(name), 6, 3);
    const Eigen::MatrixXd phi = map.features(x, w);
    for (Eigen::Index i = 0; i < 9; ++i)
      for (Eigen::Index k = 0; k < 6; ++k) {
        const Eigen::VectorXd xi = x.row(i).transpose(), wk = w.row(k).transpose();
        double expected = 0.0;
        switch (map.kind()) {
          case FeatureMapKind::rff:
            expected = RffFeature{map.phases()[k]}.value(xi, wk);
            break;
          case FeatureMapKind::favor:
            expected = FavorFeature{}.value(xi, wk);
            break;
          case FeatureMapKind::porf_softplus:
            expected = SoftplusFeature{}.value(xi, wk);
            break;
          case FeatureMapKind::softmaxfeat:
            expected = SoftmaxFeature{}.value(xi, w, k);
            break;
          case FeatureMapKind::elu:  // attention-only maps: not in feature_map_names()
          case FeatureMapKind::dpfp:
          case FeatureMapKind::hedgehog:
          case FeatureMapKind::taylor:
          case FeatureMapKind::rebased:
            break;
        }
        EXPECT_NEAR(phi(i, k), expected, 1e-14 * (1.0 + std::abs(expected))) << name;
      }
  }
}

// L = Σ_ik G_ik Φ_ik for a random G: the backward pass gives ∂L/∂Ω and ∂L/∂X, checked against
// central differences of the forward pass in every coordinate.
TEST(FeatureMaps, BatchedBackwardEqualsFiniteDifferencesOfForward) {
  const Eigen::MatrixXd x = random_matrix(7, 3, 0.6, 4), w = random_matrix(5, 3, 0.7, 5);
  const Eigen::MatrixXd g = random_matrix(7, 5, 1.0, 6);
  for (const auto& name : feature_map_names()) {
    const FeatureMap map = FeatureMap::with_random_phases(feature_map_kind(name), 5, 9);
    auto loss = [&](const Eigen::MatrixXd& xx, const Eigen::MatrixXd& ww) {
      return map.features(xx, ww).cwiseProduct(g).sum();
    };
    Eigen::MatrixXd z, phi, work, dw, dx;
    map.forward(x, w, z, phi);
    map.backward(x, w, z, phi, g, work, dw, &dx);
    const double h = 1e-6;
    for (Eigen::Index k = 0; k < w.rows(); ++k)
      for (Eigen::Index a = 0; a < w.cols(); ++a) {
        Eigen::MatrixXd wp = w, wm = w;
        wp(k, a) += h;
        wm(k, a) -= h;
        const double fd = (loss(x, wp) - loss(x, wm)) / (2 * h);
        EXPECT_NEAR(dw(k, a), fd, 1e-7 * (1.0 + std::abs(fd)))
            << name << " dΩ(" << k << "," << a << ")";
      }
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index a = 0; a < x.cols(); ++a) {
        Eigen::MatrixXd xp = x, xm = x;
        xp(i, a) += h;
        xm(i, a) -= h;
        const double fd = (loss(xp, w) - loss(xm, w)) / (2 * h);
        EXPECT_NEAR(dx(i, a), fd, 1e-7 * (1.0 + std::abs(fd)))
            << name << " dX(" << i << "," << a << ")";
      }
  }
}

TEST(FeatureMaps, FavorMaxShiftDividesEachRowByItsReportedFactorAndAvoidsOverflow) {
  const Eigen::MatrixXd x = random_matrix(6, 3, 1.0, 12), w = random_matrix(4, 3, 1.0, 13);
  const FeatureMap map(FeatureMapKind::favor);
  Eigen::MatrixXd z, phi;
  Eigen::VectorXd shift;
  map.forward(x, w, z, phi, &shift);
  const Eigen::MatrixXd exact = map.features(x, w);
  for (Eigen::Index i = 0; i < 6; ++i) {
    EXPECT_NEAR(phi.row(i).maxCoeff(), 1.0, 1e-15);
    for (Eigen::Index k = 0; k < 4; ++k)
      EXPECT_NEAR(phi(i, k) * std::exp(shift[i]), exact(i, k), 1e-13 * exact(i, k));
  }
  // Exponents near 1000 overflow exp(); the shifted features stay finite.
  map.forward(x, 400.0 * w, z, phi, &shift);
  EXPECT_TRUE(phi.allFinite());
  EXPECT_FALSE(map.features(x, 400.0 * w).allFinite());
}

TEST(FeatureMaps, SoftmaxFeaturesArePositiveAndSumToOneInEveryRow) {
  const Eigen::MatrixXd x = random_matrix(8, 3, 3.0, 14), w = random_matrix(16, 3, 5.0, 15);
  const Eigen::MatrixXd phi = FeatureMap(FeatureMapKind::softmaxfeat).features(x, w);
  EXPECT_TRUE((phi.array() >= 0.0).all());
  for (Eigen::Index i = 0; i < 8; ++i) EXPECT_NEAR(phi.row(i).sum(), 1.0, 1e-14);
}

// E_ω φ(x;ω)φ(y;ω) over ω ~ N(0, I): exp(−‖x−y‖²/2) for rff, exp(xᵀy) for favor.
TEST(FeatureMaps, RandomFeatureKernelsAreUnbiasedForTheirTargetKernels) {
  const Eigen::Index n = 200000;
  const Eigen::MatrixXd w = random_matrix(n, 2, 1.0, 21);
  Eigen::MatrixXd x(2, 2);
  x << 0.3, -0.2, -0.1, 0.4;
  for (auto kind : {FeatureMapKind::rff, FeatureMapKind::favor}) {
    const FeatureMap map = FeatureMap::with_random_phases(kind, n, 22);
    const Eigen::MatrixXd phi = map.features(x, w);
    const double estimate = phi.row(0).dot(phi.row(1)) / static_cast<double>(n);
    const double exact = kind == FeatureMapKind::rff
                             ? std::exp(-0.5 * (x.row(0) - x.row(1)).squaredNorm())
                             : std::exp(x.row(0).dot(x.row(1)));
    EXPECT_NEAR(estimate, exact, 0.01) << feature_map_name(kind);
  }
}

// The cos/sin pairs: the pointwise gradient of each component against central differences; the
// batched map (Φ = [cos Z, sin Z]) against the pointwise values; its backward pass (dΩ and dX)
// against central differences of L = Σ G ⊙ Φ.
TEST(FeatureMaps, RffPairsForwardAndBackwardEqualPointwiseValuesAndFiniteDifferences) {
  const RffPairFeature pair;
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Eigen::VectorXd x = random_matrix(4, 1, 0.7, seed),
                          w = random_matrix(4, 1, 0.9, seed + 9);
    const Eigen::MatrixXd g = pair.gradient(x, w);
    for (int c = 0; c < 2; ++c)
      for (Eigen::Index a = 0; a < 4; ++a) {
        const double fd =
            central_difference([&](const Eigen::VectorXd& v) { return pair.value(x, v)[c]; }, w, a);
        EXPECT_NEAR(g(c, a), fd, 1e-8 * (1.0 + std::abs(fd)));
      }
  }
  const Eigen::MatrixXd x = random_matrix(7, 3, 0.6, 4), w = random_matrix(5, 3, 0.7, 5);
  const FeatureMap map = FeatureMap::by_name("rff-pairs", 5, 1);
  ASSERT_TRUE(map.pairs());
  EXPECT_EQ(map.describe(), "rff-pairs");
  const Eigen::MatrixXd phi = map.features(x, w);
  ASSERT_EQ(phi.cols(), 10);
  for (Eigen::Index i = 0; i < 7; ++i)
    for (Eigen::Index k = 0; k < 5; ++k) {
      const Eigen::Vector2d v = pair.value(x.row(i).transpose(), w.row(k).transpose());
      EXPECT_NEAR(phi(i, k), v[0], 1e-14);
      EXPECT_NEAR(phi(i, 5 + k), v[1], 1e-14);
    }
  const Eigen::MatrixXd g = random_matrix(7, 10, 1.0, 6);
  auto loss = [&](const Eigen::MatrixXd& xx, const Eigen::MatrixXd& ww) {
    return map.features(xx, ww).cwiseProduct(g).sum();
  };
  Eigen::MatrixXd z, f, work, dw, dx;
  map.forward(x, w, z, f);
  map.backward(x, w, z, f, g, work, dw, &dx);
  const double h = 1e-6;
  for (Eigen::Index k = 0; k < w.rows(); ++k)
    for (Eigen::Index a = 0; a < w.cols(); ++a) {
      Eigen::MatrixXd wp = w, wm = w;
      wp(k, a) += h;
      wm(k, a) -= h;
      const double fd = (loss(x, wp) - loss(x, wm)) / (2 * h);
      EXPECT_NEAR(dw(k, a), fd, 1e-7 * (1.0 + std::abs(fd)));
    }
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index a = 0; a < x.cols(); ++a) {
      Eigen::MatrixXd xp = x, xm = x;
      xp(i, a) += h;
      xm(i, a) -= h;
      const double fd = (loss(xp, w) - loss(xm, w)) / (2 * h);
      EXPECT_NEAR(dx(i, a), fd, 1e-7 * (1.0 + std::abs(fd)));
    }
}

// (1/N) Σ_k [cos cos + sin sin] = (1/N) Σ_k cos(ω_kᵀ(x − y)): shift-invariant, and for
// ω ~ N(0, I) an unbiased estimate of exp(−|x − y|²/2), like rff.
TEST(FeatureMaps, RffPairsKernelIsShiftInvariantAndUnbiasedForTheGaussianKernel) {
  const Eigen::Index n = 200000;
  const Eigen::MatrixXd w = random_matrix(n, 2, 1.0, 21);
  Eigen::MatrixXd x(2, 2);
  x << 0.3, -0.2, -0.1, 0.4;
  const FeatureMap map = FeatureMap::rff_pairs();
  const Eigen::MatrixXd phi = map.features(x, w);
  const double estimate = phi.row(0).dot(phi.row(1)) / static_cast<double>(n);
  EXPECT_NEAR(estimate, std::exp(-0.5 * (x.row(0) - x.row(1)).squaredNorm()), 0.01);
  const Eigen::MatrixXd few = random_matrix(7, 2, 1.0, 3);
  Eigen::MatrixXd shifted = x;
  shifted.rowwise() += Eigen::RowVector2d(0.7, -1.3);
  const Eigen::MatrixXd a = map.features(x, few), b = map.features(shifted, few);
  EXPECT_NEAR(a.row(0).dot(a.row(1)), b.row(0).dot(b.row(1)), 1e-13);
}

TEST(FeatureMaps, NamesRoundTripAndUnknownNameIsRejected) {
  for (const auto& name : feature_map_names())
    EXPECT_EQ(feature_map_name(feature_map_kind(name)), name);
  EXPECT_THROW(feature_map_kind("laplace"), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
