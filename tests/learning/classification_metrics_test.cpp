// Classification metrics: Matthews correlation against its binary formula.
#include "learning/classification_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cpm {
namespace {

TEST(ClassificationMetrics, MatthewsCorrelationMatchesTheBinaryFormula) {
  // tp = 3, tn = 2, fp = 1, fn = 2: (tp·tn − fp·fn) / √((tp+fp)(tp+fn)(tn+fp)(tn+fn)).
  Eigen::VectorXi y(8), p(8);
  y << 1, 1, 1, 1, 1, 0, 0, 0;
  p << 1, 1, 1, 0, 0, 0, 0, 1;
  const double expected = (3.0 * 2 - 1.0 * 2) / std::sqrt(4.0 * 5 * 3 * 4);
  EXPECT_NEAR(matthews_correlation(y, p, 2), expected, 1e-15);
  EXPECT_NEAR(matthews_correlation(y, y, 2), 1.0, 1e-15);
  EXPECT_EQ(matthews_correlation(y, Eigen::VectorXi::Ones(8), 2), 0.0);  // constant prediction
  Eigen::VectorXi y3(6), p3(6);
  y3 << 0, 1, 2, 0, 1, 2;
  EXPECT_NEAR(matthews_correlation(y3, y3, 3), 1.0, 1e-15);
}

}  // namespace
}  // namespace cpm
