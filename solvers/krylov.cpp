#include "solvers/krylov.hpp"

namespace cpm {

KrylovResult conjugate_gradient(const LinearMap& apply, const LinearMap& precondition,
                                const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                                const std::function<bool(const Eigen::MatrixXd&)>& done,
                                int max_iterations) {
  KrylovResult result;
  x.setZero(b.rows(), b.cols());
  Eigen::MatrixXd r = b, z, p, ap;
  if (done(r)) {
    result.converged = true;
    return result;
  }
  precondition(r, z);
  p = z;
  double rz = frobenius_dot(r, z);
  while (result.iterations < max_iterations) {
    apply(p, ap);
    const double curvature = frobenius_dot(p, ap);
    if (!(curvature > 0.0)) {
      result.negative_curvature = true;
      return result;
    }
    const double alpha = rz / curvature;
    x += alpha * p;
    r -= alpha * ap;
    ++result.iterations;
    if (done(r)) {
      result.converged = true;
      return result;
    }
    precondition(r, z);
    const double rz_next = frobenius_dot(r, z);
    p = z + (rz_next / rz) * p;
    rz = rz_next;
  }
  return result;
}

}  // namespace cpm
