#include "learning/linear_classifier.hpp"

#include <gtest/gtest.h>

#include <random>

#include "learning/classification_metrics.hpp"
#include "learning/lbfgs.hpp"
#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  return testing_support::random_matrix(rows, cols, 1.0, seed);
}

TEST(LinearClassifier, LogisticObjectiveGradientEqualsFiniteDifferences) {
  const Eigen::MatrixXd f = random_matrix(30, 4, 1), w = random_matrix(5, 3, 2);
  Eigen::VectorXi y(30);
  for (int i = 0; i < 30; ++i) y[i] = i % 3;
  Eigen::MatrixXd g;
  LinearClassifier::logistic_objective(f, y, w, 0.3, &g);
  const double h = 1e-6;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      Eigen::MatrixXd wp = w, wm = w;
      wp(i, c) += h;
      wm(i, c) -= h;
      const double fd = (LinearClassifier::logistic_objective(f, y, wp, 0.3, nullptr) -
                         LinearClassifier::logistic_objective(f, y, wm, 0.3, nullptr)) /
                        (2 * h);
      EXPECT_NEAR(g(i, c), fd, 1e-8);
    }
}

TEST(LinearClassifier, LbfgsFindsTheMinimiserOfAConvexQuadratic) {
  const Eigen::MatrixXd a = random_matrix(8, 8, 3);
  const Eigen::MatrixXd h = a * a.transpose() + Eigen::MatrixXd::Identity(8, 8);
  const Eigen::VectorXd b = random_matrix(8, 1, 4);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(8);
  const LbfgsResult r = minimise_lbfgs(
      [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
        g = h * v - b;
        return 0.5 * v.dot(h * v) - b.dot(v);
      },
      x, {10, 500, 1e-6});
  EXPECT_TRUE(r.converged) << r.iterations << " iterations, f = " << r.value;
  EXPECT_LT((x - h.ldlt().solve(b)).norm(), 1e-5);
  EXPECT_LT(r.iterations, 100);
}

// Two well separated Gaussian blobs: both classifiers separate them, and probabilities are
// proper distributions.
TEST(LinearClassifier, LogisticAndRidgeSeparateSeparableClasses) {
  Eigen::MatrixXd x = random_matrix(200, 3, 5);
  Eigen::VectorXi y(200);
  for (int i = 0; i < 200; ++i) {
    y[i] = i % 2;
    x(i, 0) += y[i] ? 4.0 : -4.0;
  }
  for (auto kind : {ClassifierSettings::Kind::logistic, ClassifierSettings::Kind::ridge}) {
    ClassifierSettings s;
    s.kind = kind;
    const LinearClassifier c = LinearClassifier::fit(x, y, 2, s);
    const Eigen::MatrixXd p = c.probabilities(x);
    EXPECT_NEAR((p.rowwise().sum().array() - 1.0).abs().maxCoeff(), 0.0, 1e-12);
    EXPECT_EQ(classification_metrics(p, y).accuracy, 1.0);
  }
}

// Hand-computed metrics of four predictions with two classes.
TEST(ClassificationMetrics, AccuracyLogLossBrierAndEceOnAHandComputedExample) {
  Eigen::MatrixXd p(4, 2);
  p << 0.9, 0.1,  // y = 0, correct, confidence 0.9
      0.2, 0.8,   // y = 1, correct, confidence 0.8
      0.7, 0.3,   // y = 1, wrong, confidence 0.7
      0.4, 0.6;   // y = 1, correct, confidence 0.6
  Eigen::VectorXi y(4);
  y << 0, 1, 1, 1;
  const ClassificationMetrics m = classification_metrics(p, y);
  EXPECT_DOUBLE_EQ(m.accuracy, 0.75);
  EXPECT_NEAR(m.log_loss, -(std::log(0.9) + std::log(0.8) + std::log(0.3) + std::log(0.6)) / 4,
              1e-15);
  EXPECT_NEAR(m.brier, (0.01 + 0.04 + 0.49 + 0.16) / 4, 1e-15);
  // Four confidence bins of one prediction each (15 bins of width 1/15).
  EXPECT_NEAR(m.ece, (0.1 + 0.2 + 0.7 + 0.4) / 4, 1e-15);
  // Three classes: the Brier score sums over classes.
  Eigen::MatrixXd q(1, 3);
  q << 0.5, 0.3, 0.2;
  Eigen::VectorXi z(1);
  z << 1;
  EXPECT_NEAR(classification_metrics(q, z).brier, 0.25 + 0.49 + 0.04, 1e-15);
}

}  // namespace
}  // namespace cpm
