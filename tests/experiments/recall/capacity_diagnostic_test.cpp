// The capacity diagnostic on feature sets whose answers are known: orthogonal features of equal
// length (coherence 0, effective rank S, no spread), one repeated direction (coherence 1, rank 1),
// lengths 1 and 100 (spread 2), the coefficient of variation of the lengths, the effective
// temperature, and the relative margin of the own key.
#include <gtest/gtest.h>

#include <cmath>

#include "experiments/recall/capacity_diagnostic.hpp"

namespace cpm {
namespace {

// log G of the columns of phi, and log w for the query feature q.
CapacityDiagnostic measure(const Eigen::MatrixXd& phi, const Eigen::VectorXd& q, int own) {
  CapacityMeter meter;
  meter.add((phi.transpose() * phi).array().log().matrix(),
            (phi.transpose() * q).array().log().matrix(), own, 1.0);
  return meter.result();
}

TEST(CapacityDiagnostic, OrthogonalFeaturesOfEqualLengthHaveFullRankAndNoCoherence) {
  // Positive orthogonal features: disjoint supports (plus a tiny floor so logs stay finite).
  Eigen::MatrixXd phi = Eigen::MatrixXd::Constant(8, 4, 1e-150);
  for (int j = 0; j < 4; ++j) phi.block(2 * j, j, 2, 1).setConstant(3.0);
  const CapacityDiagnostic d = measure(phi, phi.col(2), 2);
  EXPECT_NEAR(d.coherence_mean, 0.0, 1e-12);
  EXPECT_NEAR(d.coherence_max, 0.0, 1e-12);
  EXPECT_NEAR(d.effective_rank, 4.0, 1e-9);
  EXPECT_NEAR(d.norm_spread, 0.0, 1e-12);
  EXPECT_NEAR(d.norm_cv, 0.0, 1e-12);
  EXPECT_NEAR(d.margin, 1.0, 1e-12);
  EXPECT_EQ(d.own_key_wins, 1.0);
}

TEST(CapacityDiagnostic, OneDirectionHasRankOneAndFullCoherence) {
  Eigen::VectorXd direction(3);
  direction << 1.0, 2.0, 0.5;
  Eigen::MatrixXd phi(3, 5);
  for (int j = 0; j < 5; ++j) phi.col(j) = (j + 1.0) * direction;
  const CapacityDiagnostic d = measure(phi, Eigen::VectorXd::Ones(3), 0);
  EXPECT_NEAR(d.coherence_mean, 1.0, 1e-12);
  EXPECT_NEAR(d.coherence_max, 1.0, 1e-12);
  EXPECT_NEAR(d.effective_rank, 1.0, 1e-6);
  EXPECT_NEAR(d.norm_spread, std::log10(5.0), 1e-12);   // lengths 1 … 5 times the direction
  EXPECT_NEAR(d.norm_cv, std::sqrt(2.0) / 3.0, 1e-12);  // std √2 over mean 3
  // w_j ∝ j + 1: the own key (j = 0) has 1 against 5, margin (1 − 5)/5
  EXPECT_NEAR(d.margin, -0.8, 1e-12);
  EXPECT_EQ(d.own_key_wins, 0.0);
}

TEST(CapacityDiagnostic, MeansOverSequencesAndTheSpreadOfLengths) {
  CapacityMeter meter;
  Eigen::MatrixXd log_gram(2, 2);
  log_gram << 0.0, -50.0, -50.0, std::log(1e4);  // lengths 1 and 100, nearly orthogonal
  meter.add(log_gram, Eigen::VectorXd::LinSpaced(2, std::log(2.0), 0.0), 0,
            2.0);  // own 2 against 1: margin ½
  meter.add(log_gram, Eigen::VectorXd::LinSpaced(2, 0.0, std::log(4.0)), 0,
            5.0);  // own 1 against 4: margin −¾
  const CapacityDiagnostic d = meter.result();
  EXPECT_EQ(d.sequences, 2);
  EXPECT_NEAR(d.norm_spread, 2.0, 1e-12);
  EXPECT_NEAR(d.norm_cv, 99.0 / 101.0, 1e-12);  // lengths 1 and 100: std 49.5, mean 50.5
  EXPECT_NEAR(d.effective_temperature, 3.5, 1e-12);
  EXPECT_NEAR(d.margin, 0.5 * (0.5 - 0.75), 1e-12);
  EXPECT_EQ(d.own_key_wins, 0.5);
  EXPECT_THROW(meter.add(log_gram, Eigen::VectorXd::Zero(3), 0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
