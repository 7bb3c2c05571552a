#include "core/domain.hpp"

#include <gtest/gtest.h>

#include <random>

namespace cpm {
namespace {

Eigen::VectorXd random_point(std::mt19937& rng, int d, double scale) {
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::VectorXd p(d);
  for (int a = 0; a < d; ++a) p[a] = normal(rng);
  return p;
}

TEST(Domain, BallProjectionKeepsInsidePointsAndSendsOutsidePointsToNearestBoundaryPoint) {
  std::mt19937 rng(3);
  for (int d : {1, 2, 3, 8}) {
    const Eigen::VectorXd centre = random_point(rng, d, 1.0);
    const Domain ball = Domain::ball(centre, 1.5);
    for (int trial = 0; trial < 200; ++trial) {
      const Eigen::VectorXd p = centre + random_point(rng, d, 1.5);
      Eigen::VectorXd q = p;
      ball.project(q);
      if (ball.contains(p)) {
        EXPECT_EQ(q, p);
      } else {
        EXPECT_NEAR((q - centre).norm(), 1.5, 1e-12);
        // Nearest point: p − q is parallel to the outward normal (q − centre).
        const Eigen::VectorXd normal = (q - centre) / 1.5;
        EXPECT_NEAR((p - q).dot(normal), (p - q).norm(), 1e-12);
        // And no sampled boundary point is closer.
        for (int s = 0; s < 20; ++s) {
          Eigen::VectorXd b = random_point(rng, d, 1.0);
          b = centre + 1.5 * b / b.norm();
          EXPECT_LE((p - q).norm(), (p - b).norm() + 1e-12);
        }
      }
    }
  }
}

TEST(Domain, BoxProjectionClampsEachCoordinateToTheNearestFacePoint) {
  std::mt19937 rng(5);
  for (int d : {1, 2, 3, 8}) {
    const Eigen::VectorXd lower = -Eigen::VectorXd::LinSpaced(d, 1.0, 2.0);
    const Eigen::VectorXd upper = Eigen::VectorXd::LinSpaced(d, 0.5, 3.0);
    const Domain box = Domain::box(lower, upper);
    for (int trial = 0; trial < 200; ++trial) {
      const Eigen::VectorXd p = random_point(rng, d, 3.0);
      Eigen::VectorXd q = p;
      box.project(q);
      EXPECT_TRUE(box.contains(q));
      if (box.contains(p)) {
        EXPECT_EQ(q, p);
      }
      for (int a = 0; a < d; ++a) {
        const double expected = std::min(std::max(p[a], lower[a]), upper[a]);
        EXPECT_EQ(q[a], expected);
      }
    }
  }
}

TEST(Domain, ProjectAllAgreesWithPointwiseProjection) {
  std::mt19937 rng(7);
  const int d = 3, n = 500;
  Eigen::MatrixXd x(n, d);
  for (int k = 0; k < n; ++k) x.row(k) = random_point(rng, d, 2.0).transpose();
  for (const Domain& domain : {Domain::ball(Eigen::Vector3d(0.1, -0.2, 0.3), 1.0),
                               Domain::box(Eigen::Vector3d(-1, -1, -1), Eigen::Vector3d(1, 2, 0.5)),
                               Domain::whole_space(3)}) {
    Eigen::MatrixXd all = x;
    domain.project_all(all);
    for (int k = 0; k < n; ++k) {
      Eigen::VectorXd p = x.row(k).transpose();
      domain.project(p);
      EXPECT_LT((all.row(k).transpose() - p).norm(), 1e-14);
    }
  }
}

TEST(Domain, ImpossibleShapesAreRejected) {
  EXPECT_THROW(Domain::ball(Eigen::VectorXd::Zero(2), -1.0), std::invalid_argument);
  EXPECT_THROW(Domain::box(Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 0)), std::invalid_argument);
  EXPECT_THROW(Domain::whole_space(0), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
