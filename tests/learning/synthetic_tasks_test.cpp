#include "learning/synthetic_tasks.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cpm {
namespace {

TEST(SyntheticTasks, VarianceTaskHasBalancedClassesWithVariancesOnePlusAndMinusTau) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::variance;
  t.dim = 5;
  t.tau = 0.4;
  t.train_size = 20000;
  const DataSplit s = make_synthetic_task(t, 3);
  EXPECT_EQ(s.train.y.sum(), 10000);
  for (int label : {0, 1}) {
    double sum2 = 0.0;
    int count = 0;
    for (Eigen::Index i = 0; i < s.train.size(); ++i)
      if (s.train.y[i] == label) {
        sum2 += s.train.x.row(i).squaredNorm();
        ++count;
      }
    const double variance = sum2 / (count * t.dim), expected = label ? 1.4 : 0.6;
    EXPECT_NEAR(variance, expected, 4.0 * expected * std::sqrt(2.0 / (count * t.dim)));
  }
}

TEST(SyntheticTasks, RadialLabelsAreTheSideOfTheSphereAndTheDefaultRadiusBalancesThem) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::radial;
  t.dim = 6;
  t.train_size = 20000;
  const DataSplit s = make_synthetic_task(t, 4);
  const double r = std::sqrt(6.0 * std::pow(1.0 - 2.0 / 54.0, 3));
  for (Eigen::Index i = 0; i < 200; ++i)
    EXPECT_EQ(s.train.y[i], s.train.x.row(i).norm() > r ? 1 : 0);
  EXPECT_NEAR(s.train.y.cast<double>().mean(), 0.5, 0.02);
}

// The subspace task's labels depend on the first k coordinates only; the default radius (the
// median of χ_k, by Wilson–Hilferty) balances the classes.
TEST(SyntheticTasks, SubspaceLabelsDependOnTheFirstCoordinatesOnly) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::subspace;
  t.dim = 16;
  t.relevant = 2;
  t.train_size = 20000;
  const DataSplit s = make_synthetic_task(t, 4);
  const double r = std::sqrt(2.0 * std::pow(1.0 - 1.0 / 9.0, 3));
  for (Eigen::Index i = 0; i < 200; ++i)
    EXPECT_EQ(s.train.y[i], s.train.x.row(i).head(2).norm() > r ? 1 : 0);
  EXPECT_NEAR(s.train.y.cast<double>().mean(), 0.5, 0.03);
  // The other coordinates are independent of the label: their mean square is 1 in both classes.
  for (int label : {0, 1}) {
    double square = 0.0;
    int count = 0;
    for (Eigen::Index i = 0; i < s.train.x.rows(); ++i)
      if (s.train.y[i] == label) {
        square += s.train.x.row(i).tail(14).squaredNorm() / 14.0;
        ++count;
      }
    EXPECT_NEAR(square / count, 1.0, 0.03) << label;
  }
  EXPECT_EQ(synthetic_task_kind("subspace"), SyntheticTask::Kind::subspace);
  t.relevant = 17;
  EXPECT_THROW(make_synthetic_task(t, 1), std::invalid_argument);
}

TEST(SyntheticTasks, MixtureTaskUsesAllClassesAndClusters) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::mixture;
  t.dim = 3;
  t.classes = 3;
  t.components = 6;
  t.train_size = 3000;
  const DataSplit s = make_synthetic_task(t, 5);
  EXPECT_EQ(s.train.classes, 3);
  for (int c = 0; c < 3; ++c) EXPECT_GT((s.train.y.array() == c).count(), 500);
  EXPECT_EQ(s.train.y.minCoeff(), 0);
  EXPECT_EQ(s.train.y.maxCoeff(), 2);
}

// Label noise p changes exactly round(p n) training labels, each to another class, and
// leaves the inputs and the test set untouched.
TEST(SyntheticTasks, LabelNoiseFlipsExactlyTheRequestedFractionOfTrainingLabels) {
  for (auto kind : {SyntheticTask::Kind::variance, SyntheticTask::Kind::mixture}) {
    SyntheticTask t;
    t.kind = kind;
    t.classes = 4;
    t.components = 8;
    t.train_size = 1000;
    const DataSplit clean = make_synthetic_task(t, 6);
    for (double p : {0.1, 0.2}) {
      t.label_noise = p;
      const DataSplit noisy = make_synthetic_task(t, 6);
      EXPECT_EQ(noisy.train.x, clean.train.x);
      EXPECT_EQ(noisy.test.y, clean.test.y);
      EXPECT_EQ((noisy.train.y.array() != clean.train.y.array()).count(), std::lround(p * 1000));
      EXPECT_LT(noisy.train.y.maxCoeff(), noisy.train.classes);
    }
  }
}

TEST(SyntheticTasks, UnknownNamesAndImpossibleParametersAreRejected) {
  EXPECT_THROW(synthetic_task_kind("spiral"), std::invalid_argument);
  SyntheticTask t;
  t.tau = 1.5;
  EXPECT_THROW(make_synthetic_task(t, 1), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
