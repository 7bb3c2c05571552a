// The two-loop recursion of solvers/lbfgs_memory.hpp: with pairs y_i = A s_i of a symmetric
// positive definite A, H satisfies the secant equation H y = s for the newest pair, is symmetric
// and positive definite, is H₀ when empty, keeps `capacity` pairs, and refuses a pair of
// non-positive curvature.
#include "solvers/lbfgs_memory.hpp"

#include <gtest/gtest.h>

#include "tests/random_matrix.hpp"

namespace cpm {
namespace {

using testing_support::random_matrix;

constexpr Eigen::Index kRows = 15, kCols = 2;

// A symmetric positive definite operator on (15, 2) matrices: v ↦ reshape(A vec(v)).
struct Operator {
  Operator() {
    const Eigen::MatrixXd b = random_matrix(kRows * kCols, kRows * kCols, 1.0, 7);
    a = b * b.transpose() + Eigen::MatrixXd::Identity(kRows * kCols, kRows * kCols);
  }
  Eigen::MatrixXd operator()(const Eigen::MatrixXd& v) const {
    const Eigen::VectorXd w = a * Eigen::Map<const Eigen::VectorXd>(v.data(), v.size());
    return Eigen::Map<const Eigen::MatrixXd>(w.data(), kRows, kCols);
  }
  Eigen::MatrixXd a;
};

// H₀ = diag(1/A_ii), a Jacobi preconditioner.
LinearMap jacobi(const Operator& a) {
  return [&a](const Eigen::MatrixXd& q, Eigen::MatrixXd& z) {
    const Eigen::VectorXd d = a.a.diagonal();
    z = q.array() / Eigen::Map<const Eigen::MatrixXd>(d.data(), kRows, kCols).array();
  };
}

TEST(LbfgsMemory, EmptyMemoryIsTheInitialMatrix) {
  const Operator a;
  LbfgsMemory memory(5);
  const Eigen::MatrixXd v = random_matrix(kRows, kCols, 1.0, 1);
  Eigen::MatrixXd z, z0;
  memory.apply(v, z, jacobi(a));
  jacobi(a)(v, z0);
  EXPECT_EQ(memory.size(), 0);
  EXPECT_LT((z - z0).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(LbfgsMemory, NewestPairSatisfiesTheSecantEquationOnceFull) {
  const Operator a;
  LbfgsMemory memory(4);
  for (unsigned i = 0; i < 9; ++i) {  // more pairs than it holds: the oldest are dropped
    const Eigen::MatrixXd s = random_matrix(kRows, kCols, 1.0, 10 + i);
    const Eigen::MatrixXd y = a(s);
    ASSERT_TRUE(memory.push(s, y));
    EXPECT_EQ(memory.size(), std::min<int>(4, static_cast<int>(i) + 1));
    Eigen::MatrixXd hy;
    memory.apply(y, hy, jacobi(a));
    EXPECT_LT((hy - s).norm(), 1e-10 * s.norm()) << "after " << i + 1 << " pairs";
  }
}

TEST(LbfgsMemory, ApproximationIsSymmetricPositiveDefinite) {
  const Operator a;
  LbfgsMemory memory(6);
  for (unsigned i = 0; i < 6; ++i) {
    const Eigen::MatrixXd s = random_matrix(kRows, kCols, 1.0, 30 + i);
    memory.push(s, a(s));
  }
  const Eigen::MatrixXd v = random_matrix(kRows, kCols, 1.0, 2);
  const Eigen::MatrixXd w = random_matrix(kRows, kCols, 1.0, 3);
  Eigen::MatrixXd hv, hw;
  memory.apply(v, hv, jacobi(a));
  memory.apply(w, hw, jacobi(a));
  EXPECT_NEAR(frobenius_dot(w, hv), frobenius_dot(v, hw), 1e-12 * hv.norm() * w.norm());
  EXPECT_GT(frobenius_dot(v, hv), 0.0);
  EXPECT_GT(frobenius_dot(w, hw), 0.0);
}

TEST(LbfgsMemory, RefusesAPairOfNonPositiveCurvature) {
  LbfgsMemory memory(3);
  const Eigen::MatrixXd s = random_matrix(kRows, kCols, 1.0, 4);
  EXPECT_FALSE(memory.push(s, -s));
  EXPECT_FALSE(memory.push(s, Eigen::MatrixXd::Zero(kRows, kCols)));
  EXPECT_TRUE(memory.push(s, s));
  EXPECT_EQ(memory.size(), 1);
  memory.clear();
  EXPECT_EQ(memory.size(), 0);
  EXPECT_THROW(LbfgsMemory(0), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
