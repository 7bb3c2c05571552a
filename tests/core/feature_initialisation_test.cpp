#include "core/feature_initialisation.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cpm {
namespace {

TEST(FeatureInitialisation, RowsWithinEachOrthogonalBlockAreOrthogonal) {
  const Eigen::Index d = 6, n = 20;  // three full blocks and a partial one
  const Eigen::MatrixXd w = orthogonal_gaussian_features(n, d, 1.3, 5);
  for (Eigen::Index b = 0; b * d < n; ++b)
    for (Eigen::Index i = b * d; i < std::min(n, (b + 1) * d); ++i)
      for (Eigen::Index j = i + 1; j < std::min(n, (b + 1) * d); ++j)
        EXPECT_NEAR(w.row(i).dot(w.row(j)) / (w.row(i).norm() * w.row(j).norm()), 0.0, 1e-12);
  // Rows of different blocks are independent, not orthogonal.
  EXPECT_GT(std::abs(w.row(0).dot(w.row(d)) / (w.row(0).norm() * w.row(d).norm())), 1e-6);
}

// Row norms are scale·χ_d: E‖ω‖² = scale² d and E‖ω‖ = scale √2 Γ((d+1)/2) / Γ(d/2); and
// a fixed coordinate has variance scale² (the N(0, scale² I) marginal).
TEST(FeatureInitialisation, OrthogonalRowsHaveGaussianMarginalsWithChiNorms) {
  const Eigen::Index d = 4, n = 40000;
  const double scale = 0.5;
  const Eigen::MatrixXd w = orthogonal_gaussian_features(n, d, scale, 9);
  const Eigen::VectorXd norms = w.rowwise().norm();
  const double expected_norm = scale * std::sqrt(2.0) * std::tgamma(2.5) / std::tgamma(2.0);
  const double sd_norm = std::sqrt(scale * scale * d - expected_norm * expected_norm);
  EXPECT_NEAR(norms.mean(), expected_norm, 4.0 * sd_norm / std::sqrt(double(n)));
  EXPECT_NEAR(norms.squaredNorm() / n, scale * scale * d,
              4.0 * scale * scale * std::sqrt(2.0 * d / n));
  for (Eigen::Index a = 0; a < d; ++a) {
    EXPECT_NEAR(w.col(a).mean(), 0.0, 4.0 * scale / std::sqrt(double(n)));
    EXPECT_NEAR(w.col(a).squaredNorm() / n, scale * scale,
                4.0 * scale * scale * std::sqrt(2.0 / n));
  }
}

TEST(FeatureInitialisation, GaussianFeaturesHaveTheRequestedScaleAndDependOnTheSeedOnly) {
  const Eigen::MatrixXd w = gaussian_features(20000, 3, 2.0, 4);
  EXPECT_NEAR(w.mean(), 0.0, 4.0 * 2.0 / std::sqrt(60000.0));
  EXPECT_NEAR(w.squaredNorm() / 60000.0, 4.0, 4.0 * 4.0 * std::sqrt(2.0 / 60000.0));
  EXPECT_EQ(gaussian_features(50, 3, 1.0, 4), gaussian_features(50, 3, 1.0, 4));
  EXPECT_NE(gaussian_features(50, 3, 1.0, 4), gaussian_features(50, 3, 1.0, 5));
  EXPECT_EQ(orthogonal_gaussian_features(50, 3, 1.0, 4),
            orthogonal_gaussian_features(50, 3, 1.0, 4));
  // The first rows do not depend on how many rows are drawn.
  EXPECT_EQ(gaussian_features(10, 3, 1.0, 4), gaussian_features(50, 3, 1.0, 4).topRows(10));
}

}  // namespace
}  // namespace cpm
