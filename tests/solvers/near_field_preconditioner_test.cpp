// The near-field preconditioner of solvers/near_field_preconditioner.hpp: its pairs hold each
// particle's nearest neighbours; where every pair is near and every pair block is positive
// semi-definite (a quadratic kernel) it inverts the restricted Jacobian exactly, on a ball's wall
// too; for the crowded Riesz gas, whose pair blocks are indefinite, it is symmetric positive
// definite on the allowed motions.
#include "solvers/near_field_preconditioner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/drift_jacobian.hpp"
#include "solvers/krylov.hpp"
#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

using testing_support::random_matrix;

// Gaussian points pulled into the ball of radius 0.9 where they fall outside it.
Eigen::MatrixXd random_points(Eigen::Index n, Eigen::Index d, unsigned seed, double scale) {
  Eigen::MatrixXd m = random_matrix(n, d, scale, seed);
  for (Eigen::Index k = 0; k < n; ++k)
    if (m.row(k).norm() > 0.9) m.row(k) *= 0.9 / m.row(k).norm();
  return m;
}

// Particles of the disc of radius 0.9, a third of them moved onto the unit circle, where the
// repulsion presses them outwards.
Eigen::MatrixXd crowded_disc(Eigen::Index n, unsigned seed) {
  Eigen::MatrixXd x = random_points(n, 2, seed, 0.4);
  for (Eigen::Index k = 0; k < n / 3; ++k) x.row(k) /= x.row(k).norm();
  return x;
}

TEST(NearFieldPreconditioner, PairsHoldEveryParticlesNearestNeighbours) {
  for (const int d : {2, 3}) {
    const Eigen::MatrixXd x = random_points(120, d, 3 + d, 0.4);
    NearFieldPreconditioner m;
    m.find_pairs(x);
    const std::set<std::pair<Eigen::Index, Eigen::Index>> pairs(m.pairs().begin(), m.pairs().end());
    EXPECT_EQ(pairs.size(), m.pairs().size()) << "each pair once";
    for (Eigen::Index k = 0; k < x.rows(); ++k) {
      std::vector<std::pair<double, Eigen::Index>> by_distance;
      for (Eigen::Index l = 0; l < x.rows(); ++l)
        if (l != k) by_distance.emplace_back((x.row(k) - x.row(l)).squaredNorm(), l);
      std::sort(by_distance.begin(), by_distance.end());
      for (int p = 0; p < NearFieldPreconditioner::kNeighbours; ++p) {
        const Eigen::Index l = by_distance[p].second;
        EXPECT_TRUE(pairs.count({std::min(k, l), std::max(k, l)})) << "d=" << d << " k=" << k;
      }
    }
  }
}

TEST(NearFieldPreconditioner, InvertsTheRestrictedJacobianWhenEveryPairIsNearAndConvex) {
  // Nine particles: every pair is among the eight nearest of one of them. The quadratic kernel's
  // pair blocks are κ I, so M is P (J + σ) P plus the wall's curvature, exactly.
  const InteractionKernel kernel = InteractionKernel::quadratic(0.8);
  // The field pulls towards (3, 0), pressing the particles on the right of the circle outwards.
  ForceField forces(std::make_shared<QuadraticPotential>(2.0, Eigen::Vector2d(3.0, 0.0)),
                    make_blocked_pair_sum(kernel), 1.0);
  const Domain ball = Domain::ball(Eigen::Vector2d::Zero(), 1.0);
  DriftJacobian jacobian(forces, ball, make_pair_hessian(kernel));
  Eigen::MatrixXd x = random_points(9, 2, 11, 0.35);
  for (Eigen::Index k = 0; k < 4; ++k) x.row(k) << std::cos(0.4 * k - 0.6), std::sin(0.4 * k - 0.6);
  Eigen::MatrixXd drift;
  forces.compute(x, drift, nullptr);
  jacobian.linearise(x, drift, drift);
  ASSERT_GT(jacobian.constraints().count(), 0);
  Eigen::MatrixXd v = random_matrix(9, 2, 1.0, 12), jv, back;
  jacobian.restrict(v);
  const double shift = 0.25;
  jacobian.apply(v, jv, shift);
  jacobian.precondition(jv, back, shift);
  EXPECT_LT((back - v).norm(), 1e-10 * v.norm());
}

TEST(NearFieldPreconditioner, IsSymmetricPositiveDefiniteOnTheAllowedMotions) {
  const InteractionKernel kernel = InteractionKernel::power(0.5);
  ForceField forces(std::make_shared<ZeroPotential>(), make_blocked_pair_sum(kernel), 1.0);
  DriftJacobian jacobian(forces, Domain::ball(Eigen::Vector2d::Zero(), 1.0),
                         make_pair_hessian(kernel));
  const Eigen::MatrixXd x = crowded_disc(90, 21);
  Eigen::MatrixXd drift;
  forces.compute(x, drift, nullptr);
  jacobian.linearise(x, drift, drift);
  ASSERT_GT(jacobian.constraints().count(), 10);
  Eigen::MatrixXd u = random_matrix(90, 2, 1.0, 22), v = random_matrix(90, 2, 1.0, 23);
  jacobian.restrict(u);
  jacobian.restrict(v);
  Eigen::MatrixXd mu, mv;
  jacobian.precondition(u, mu, 0.0);
  jacobian.precondition(v, mv, 0.0);
  EXPECT_NEAR(frobenius_dot(u, mv), frobenius_dot(v, mu), 1e-10 * std::abs(frobenius_dot(u, mv)));
  EXPECT_GT(frobenius_dot(u, mu), 0.0);
  EXPECT_GT(frobenius_dot(v, mv), 0.0);
  for (Eigen::Index k = 0; k < 90; ++k)
    if (jacobian.constraints().active(k)) {
      EXPECT_NEAR(mv.row(k).dot(x.row(k)), 0.0, 1e-12 * mv.norm());
    }
}

}  // namespace
}  // namespace cpm
