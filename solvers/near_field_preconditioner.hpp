#pragma once
// A sparse preconditioner for the restricted Jacobian P J P of a pair sum in d ≥ 2
// (docs/numerics.md §3.9). Block Jacobi sees each particle alone; in 2D and 3D the soft modes of
// a crowded gas (long shear waves of its near-lattice) are collective, and CG then needs hundreds
// of iterations. M keeps the pair couplings between each particle and its kNeighbours nearest,
// made positive semi-definite, and puts the rest of J's diagonal block on the diagonal:
//     M_kl = −(λ/N)|∇²W(x_k − x_l)|        for near pairs,
//     M_kk = Σ_{l near k} (λ/N)|∇²W(x_k − x_l)| + [J_kk − Σ_{l near k} (λ/N)∇²W(x_k − x_l)]₊ + σ I,
// with |B| the matrix of B's eigenvalues in absolute value and [B]₊ those below zero set to zero;
// each near pair then adds a positive semi-definite 2 × 2 block of d × d blocks. The constraints
// enter as in block Jacobi: blocks restricted to the allowed motions, the wall's curvature term on
// the diagonal, identity on the forbidden ones. M is factored once per linearisation and shift by
// a sparse LDLᵀ (approximate minimum degree ordering).
#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <utility>
#include <vector>

#include "solvers/active_constraints.hpp"
#include "solvers/pair_hessian.hpp"

namespace cpm {

class NearFieldPreconditioner {
 public:
  static constexpr int kNeighbours = 8;

  // The near pairs of x (each unordered pair once): every particle with its kNeighbours nearest,
  // found by a sweep along the first coordinate (about N^{2 − 1/d} distances for a spread gas).
  void find_pairs(const Eigen::MatrixXd& x);
  // Assembles and factors M at x (the configuration of the last find_pairs). `blocks` holds J's
  // diagonal blocks (N × d², row-major), `weight` = λ/N. False if the factorisation failed.
  bool factor(const Eigen::MatrixXd& x, const Eigen::MatrixXd& blocks, const PairHessian& pair,
              double weight, const ActiveConstraints& active, double shift);
  // z = M⁻¹ r, restricted to the allowed motions.
  void solve(const Eigen::MatrixXd& r, Eigen::MatrixXd& z) const;

  const std::vector<std::pair<Eigen::Index, Eigen::Index>>& pairs() const { return pairs_; }

 private:
  std::vector<std::pair<Eigen::Index, Eigen::Index>> pairs_;
  std::vector<Eigen::MatrixXd> projections_;  // P_k per particle (identity when free)
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> factorization_;
  mutable Eigen::VectorXd rhs_, solution_;
};

}  // namespace cpm
