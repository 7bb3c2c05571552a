#pragma once
// The limited-memory BFGS approximation of the inverse Hessian (J. Nocedal, Math. Comp. 35 (1980)
// 773–782; docs/numerics.md §3.10) for the projected L-BFGS minimiser, on (N, d) matrices with the
// Frobenius inner product. It keeps the last `capacity` pairs s_i = x_{i+1} − x_i,
// y_i = G_{i+1} − G_i and applies H to a vector by the two-loop recursion, starting from a
// preconditioner H₀ ≈ J⁻¹:
//     q ← v;  for i newest to oldest: a_i = ρ_i s_i·q,  q ← q − a_i y_i        (ρ_i = 1/(s_i·y_i))
//     z ← H₀ q;  for i oldest to newest: b = ρ_i y_i·z,  z ← z + (a_i − b) s_i.
// H then satisfies the secant equation H y_i = s_i for the newest pair.
#include <Eigen/Dense>
#include <vector>

#include "solvers/krylov.hpp"

namespace cpm {

class LbfgsMemory {
 public:
  explicit LbfgsMemory(int capacity);

  // Stores (s, y) if s·y > 0 beyond rounding (a pair of non-positive curvature would make H
  // indefinite), dropping the oldest pair when full. Returns whether it was stored.
  bool push(const Eigen::MatrixXd& s, const Eigen::MatrixXd& y);
  void clear() { size_ = 0; }
  int size() const { return size_; }

  // z = H v, with H₀ given by `initial` (z = H₀ q).
  void apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& z, const LinearMap& initial);

 private:
  // Slot of the i-th oldest stored pair.
  int slot(int i) const { return (first_ + i) % capacity_; }

  int capacity_;
  int first_ = 0, size_ = 0;
  std::vector<Eigen::MatrixXd> s_, y_;
  std::vector<double> rho_, a_;
  Eigen::MatrixXd q_;
};

}  // namespace cpm
