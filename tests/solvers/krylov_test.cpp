// Preconditioned conjugate gradients (solvers/krylov.hpp) solve a symmetric positive definite
// system to the requested residual, and stop at a direction of negative curvature.
#include "solvers/krylov.hpp"

#include <gtest/gtest.h>

namespace cpm {
namespace {

// A = tridiag(−1, 2 + c, −1) over the entries of an (n, 2) matrix in storage order.
void apply_tridiagonal(const Eigen::MatrixXd& v, Eigen::MatrixXd& out, double c) {
  const Eigen::Index m = v.size();
  out.resize(v.rows(), v.cols());
  for (Eigen::Index i = 0; i < m; ++i)
    out.data()[i] = (2.0 + c) * v.data()[i] - (i > 0 ? v.data()[i - 1] : 0.0) -
                    (i + 1 < m ? v.data()[i + 1] : 0.0);
}

TEST(Krylov, ConjugateGradientSolvesAPositiveDefiniteSystem) {
  const Eigen::MatrixXd exact = Eigen::MatrixXd::Random(50, 2);
  Eigen::MatrixXd b, x, check;
  apply_tridiagonal(exact, b, 0.01);
  const KrylovResult r = conjugate_gradient(
      [](const Eigen::MatrixXd& v, Eigen::MatrixXd& out) { apply_tridiagonal(v, out, 0.01); },
      [](const Eigen::MatrixXd& v, Eigen::MatrixXd& z) { z = v / 2.01; }, b, x,
      [&](const Eigen::MatrixXd& res) { return res.norm() <= 1e-13 * b.norm(); }, 1000);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.negative_curvature);
  EXPECT_LE(r.iterations, 100);  // at most the dimension, up to rounding
  EXPECT_LT((x - exact).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Krylov, ConjugateGradientReportsNegativeCurvature) {
  const Eigen::MatrixXd b = Eigen::MatrixXd::Ones(20, 2);
  Eigen::MatrixXd x;
  const KrylovResult r = conjugate_gradient(
      [](const Eigen::MatrixXd& v, Eigen::MatrixXd& out) { apply_tridiagonal(v, out, -3.0); },
      [](const Eigen::MatrixXd& v, Eigen::MatrixXd& z) { z = v; }, b, x,
      [&](const Eigen::MatrixXd& res) { return res.norm() <= 1e-12; }, 100);
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(r.negative_curvature);
}

}  // namespace
}  // namespace cpm
