#pragma once
// Preconditioned conjugate gradients for the symmetric systems of the implicit integrators and the
// Newton minimiser (docs/numerics.md §3.9), on (N, d) matrices with the Frobenius inner product.
#include <Eigen/Dense>
#include <functional>

namespace cpm {

// y = A x, or z = M⁻¹ r for a symmetric positive definite preconditioner M.
using LinearMap = std::function<void(const Eigen::MatrixXd&, Eigen::MatrixXd&)>;

// The Frobenius inner product Σ a_ij b_ij of two (N, d) matrices.
inline double frobenius_dot(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a.array() * b.array()).sum();
}

struct KrylovResult {
  int iterations = 0;
  bool converged = false;
  // A direction p with pᵀAp ≤ 0 was met (A is not positive definite); x holds the iterate before
  // it.
  bool negative_curvature = false;
};

// Solves A x = b from x = 0 by preconditioned conjugate gradients (M. R. Hestenes, E. Stiefel,
// J. Res. Nat. Bur. Standards 49 (1952) 409–436), stopping as soon as done(r) holds for the
// residual r = b − A x, after max_iterations, or at a direction of non-positive curvature.
KrylovResult conjugate_gradient(const LinearMap& apply, const LinearMap& precondition,
                                const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                                const std::function<bool(const Eigen::MatrixXd&)>& done,
                                int max_iterations);

}  // namespace cpm
