#pragma once
// The Jacobian J = ∂F/∂x of the drift F_k = N ∇_{ω_k} E_N (docs/model.md §1) about a
// configuration, as a matrix-free operator for the Krylov solves of the implicit integrators and
// the Newton minimiser (docs/numerics.md §3.9). J is N times the Hessian of E_N: symmetric.
//
// The domain enters through the constraints active at the configuration: a particle on the wall of
// D pushed outwards (−G·n > 0 for the objective's gradient G) may only move along the wall. The
// operator is the Jacobian restricted to the allowed motions, P J P, plus on a ball the wall's
// curvature term (μ_k/R)(I − n nᵀ) with μ_k = −G_k·n_k (the Hessian of the Lagrangian of the
// constraint |x_k − c|² ≤ R²), so that Newton steps along the wall are exact to second order.
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/domain.hpp"
#include "solvers/active_constraints.hpp"
#include "solvers/force_field.hpp"
#include "solvers/near_field_preconditioner.hpp"
#include "solvers/pair_hessian.hpp"

namespace cpm {

class DriftJacobian {
 public:
  // `pair` gives exact pair Hessians; null: J v by a one-sided directional finite difference of the
  // forces, (F(x + εv) − F(x))/ε, for force fields without exact pair Hessians (the particle-mesh
  // sum).
  DriftJacobian(ForceField& forces, Domain domain, std::unique_ptr<PairHessian> pair);

  // Linearises about x, where the drift is F and the objective's gradient G (F itself, or F plus a
  // proximal term) decides the active constraints. Costs one pair pass (the diagonal blocks of J
  // for the preconditioner) with exact pair Hessians, 2d potential gradients for a general V.
  void linearise(const Eigen::MatrixXd& x, const Eigen::MatrixXd& drift,
                 const Eigen::MatrixXd& gradient);

  // out = P (J + shift I) P v + curvature term (see above): the restricted operator, symmetric.
  void apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out, double shift);
  // z ≈ (P (J + shift I) P)⁻¹ r on the allowed motions: in 1D, when it is diagonally dominant,
  // the band of J over the kBand nearest neighbours in sorted order with the full diagonal
  // (banded LDLᵀ); in 2D and 3D with exact pair Hessians the near-field matrix of
  // solvers/near_field_preconditioner.hpp (sparse LDLᵀ); otherwise block Jacobi with the d × d
  // diagonal blocks of J, made positive definite (|eigenvalues|, floored).
  void precondition(const Eigen::MatrixXd& r, Eigen::MatrixXd& z, double shift);
  void restrict(Eigen::MatrixXd& v) const { active_.restrict(v); }

  const ActiveConstraints& constraints() const { return active_; }
  bool exact() const { return pair_ != nullptr; }
  // Products J v since construction (one pair pass each).
  std::uint64_t products() const { return products_; }

 private:
  void potential_apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out);
  void potential_blocks(Eigen::MatrixXd& blocks);
  void prepare_preconditioner(double shift);

  ForceField& forces_;
  ActiveConstraints active_;
  std::unique_ptr<PairHessian> pair_;
  double potential_strength_ = 0.0;  // V = a|x − c|²/2: ∇²V = a I
  bool general_potential_ = false;   // any other V: finite differences of ∇V
  Eigen::MatrixXd x_, drift_, blocks_, work_, work2_;
  Eigen::VectorXd values_;
  std::uint64_t products_ = 0;
  // Preconditioner, built for one shift at a time.
  static constexpr Eigen::Index kBand = 6;
  bool banded_ = false;
  double prepared_shift_ = -1.0;
  std::vector<Eigen::Index> order_;  // 1D: particles in increasing x
  // 1D: column j of row i is J between sorted particles i and i + 1 + j (zero for a particle held
  // by the wall); the factor L of LDLᵀ in the same storage (L between i + 1 + j and i), and D.
  Eigen::MatrixXd band_, band_factor_;
  Eigen::VectorXd band_pivots_;
  Eigen::MatrixXd inverse_blocks_;  // block Jacobi: (M_k)⁻¹, row-major d × d per row
  bool near_field_ = false;         // 2D, 3D: the near-field preconditioner
  NearFieldPreconditioner near_field_preconditioner_;
};

}  // namespace cpm
