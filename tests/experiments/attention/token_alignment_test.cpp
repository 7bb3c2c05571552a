// Phase A's pieces for the paired protocol: the token alignment (normalised or not) against
// finite differences and against physics/alignment.hpp, and the linear-fit residual.
#include <gtest/gtest.h>

#include <cmath>

#include "core/random_stream.hpp"
#include "experiments/attention/attention_phase_a.hpp"
#include "experiments/attention/token_alignment.hpp"
#include "physics/alignment.hpp"

namespace cpm {
namespace {

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                              double scale = 1.0) {
  RandomStream s(seed, RandomPurpose::test_inputs, 0, 0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = scale * s.normal();
  return m;
}

const char* name(TokenNormalisation n) {
  static const char* const names[] = {"none", "mean", "l1", "l2"};
  return names[static_cast<int>(n)];
}

TEST(TokenAlignment, GradientOfTheTotalMatchesFiniteDifferencesForEveryNormalisation) {
  const auto x = std::make_shared<const Eigen::MatrixXd>(random_matrix(40, 3, 1, 0.7));
  Eigen::MatrixXd targets = random_matrix(40, 1, 2);
  for (FeatureMapKind kind :
       {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat})
    for (TokenNormalisation normalisation : {TokenNormalisation::none, TokenNormalisation::mean,
                                             TokenNormalisation::l1, TokenNormalisation::l2}) {
      const bool normalised = normalisation != TokenNormalisation::none;
      const TokenAlignmentPotential v(x, targets, FeatureMap(kind), 0.7, normalisation);
      Eigen::MatrixXd omega = random_matrix(6, 3, 3);
      Eigen::VectorXd value;
      Eigen::MatrixXd gradient;
      v.evaluate(omega, value, &gradient);
      EXPECT_NEAR(-value.sum() / (0.7 * 6), v.alignment(omega), 1e-14);
      auto total = [&] {
        Eigen::VectorXd e;
        v.evaluate(omega, e, nullptr);
        return e.sum();
      };
      const double h = 1e-6;
      for (Eigen::Index k = 0; k < omega.rows(); ++k)
        for (Eigen::Index a = 0; a < omega.cols(); ++a) {
          const double saved = omega(k, a);
          omega(k, a) = saved + h;
          const double plus = total();
          omega(k, a) = saved - h;
          const double minus = total();
          omega(k, a) = saved;
          EXPECT_NEAR(gradient(k, a), (plus - minus) / (2 * h),
                      1e-6 * std::max(1.0, gradient.cwiseAbs().maxCoeff()))
              << feature_map_name(kind) << " " << name(normalisation) << " k " << k;
        }
      if (!normalised) {  // the same potential as physics/alignment.hpp's
        AlignmentSettings settings;
        settings.gamma = 0.7;
        const AlignmentPotential reference(x, targets, FeatureMap(kind), settings);
        Eigen::VectorXd value_ref;
        Eigen::MatrixXd gradient_ref;
        reference.evaluate(omega, value_ref, &gradient_ref);
        EXPECT_LT((value - value_ref).norm(), 1e-12 * std::max(1.0, value_ref.norm()));
        EXPECT_LT((gradient - gradient_ref).norm(), 1e-12 * std::max(1.0, gradient_ref.norm()));
      }
    }
}

TEST(TokenAlignment, NormalisedAlignmentIgnoresTheScaleOfEachTokensFeatures) {
  // favor: φ(x; ω) = exp(ωᵀx − |x|²/2). Replacing x by x with |x|² changed through an orthogonal
  // component that no particle sees would scale all m features of that token by one factor;
  // here the factor is applied through the favor offset by adding a direction orthogonal to Ω.
  Eigen::MatrixXd x = random_matrix(30, 4, 5, 0.5);
  Eigen::MatrixXd omega = random_matrix(5, 4, 6);
  omega.col(3).setZero();  // no particle sees the last coordinate
  Eigen::MatrixXd scaled = x;
  for (Eigen::Index i = 0; i < x.rows(); ++i) scaled(i, 3) += 0.3 * (i % 4);  // per-token factor
  const Eigen::MatrixXd targets = random_matrix(30, 1, 7);
  auto a = [&](const Eigen::MatrixXd& tokens, TokenNormalisation normalisation) {
    return TokenAlignmentPotential(std::make_shared<const Eigen::MatrixXd>(tokens), targets,
                                   FeatureMap(FeatureMapKind::favor), 1.0, normalisation)
        .alignment(omega);
  };
  for (TokenNormalisation n :
       {TokenNormalisation::mean, TokenNormalisation::l1, TokenNormalisation::l2})
    EXPECT_NEAR(a(x, n), a(scaled, n), 1e-12 * a(x, n)) << name(n);
  EXPECT_GT(std::abs(a(x, TokenNormalisation::none) - a(scaled, TokenNormalisation::none)),
            1e-3 * a(x, TokenNormalisation::none));
  // Positive features: φ/‖φ‖₁ is φ/((1/m) Σ φ) divided by m, so A is divided by m².
  EXPECT_NEAR(a(x, TokenNormalisation::l1) * static_cast<double>(omega.rows() * omega.rows()),
              a(x, TokenNormalisation::mean), 1e-12 * a(x, TokenNormalisation::mean));
}

TEST(TokenAlignment, TheAttentionsKeyNormalisationChoosesTheTokensAndRefusesAnother) {
  EXPECT_EQ(phase_a_token_normalisation(false, KeyNormalisation::none), TokenNormalisation::none);
  EXPECT_EQ(phase_a_token_normalisation(true, KeyNormalisation::none), TokenNormalisation::mean);
  EXPECT_EQ(phase_a_token_normalisation(false, KeyNormalisation::l1), TokenNormalisation::l1);
  EXPECT_EQ(phase_a_token_normalisation(false, KeyNormalisation::l2), TokenNormalisation::l2);
  EXPECT_THROW(phase_a_token_normalisation(true, KeyNormalisation::l2), std::invalid_argument);
}

TEST(LinearFitResidual, IsZeroForALinearMapOfTheParticlesAndPositiveOtherwise) {
  const Eigen::MatrixXd before = random_matrix(64, 16, 11);
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(16, 16) + 0.3 * random_matrix(16, 16, 12);
  const LinearFitResidual exact = linear_fit_residual(before, before * a);
  EXPECT_LT(exact.relative, 1e-12);
  EXPECT_LT(exact.of_change, 1e-12);
  // A change of one particle only is not a linear map of all of them.
  Eigen::MatrixXd after = before;
  after.row(0) += random_matrix(1, 16, 13);
  const LinearFitResidual r = linear_fit_residual(before, after);
  EXPECT_GT(r.relative, 1e-3);
  EXPECT_GT(r.of_change, 0.5);  // most of a single particle's move cannot be absorbed
  EXPECT_LE(r.of_change, 1.0);
  EXPECT_EQ(linear_fit_residual(before, before).of_change, 0.0);
  // An elementwise non-linear change.
  const LinearFitResidual t = linear_fit_residual(before, before.array().tanh().matrix());
  EXPECT_GT(t.relative, 1e-2);
}

}  // namespace
}  // namespace cpm
