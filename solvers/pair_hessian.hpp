#pragma once
// Exact second derivatives of the pair sum, for the implicit integrators and the Newton minimiser
// (docs/numerics.md §3.9). For a radial kernel W(z) = f(|z|²) with ∇W(z) = g(r²) z,
//     ∇²W(z) = g(r²) I + 2 g'(r²) z zᵀ = h(r²) [ q z zᵀ / (r² + e²) − I ],   h = −g,
// because every kernel of physics/riesz_kernel.hpp has g' = −(q/2) g / (r² + e²): q = s + 2 for
// |z|^{−s} (q = 2 for −log|z|, q = 1 for −|z|), the same at r² + ε² for the mollified kernel
// (e² = ε²), q = 1 for κ|z| and q = 0 for κ|z|²/2. The products run over blocks of particles with
// the SIMD evaluators of the pair sum (solvers/simd_pair_evaluators.hpp), each unordered pair once,
// on the tile schedule of solvers/tile_schedule.hpp: the sums do not depend on the thread count.
#include <Eigen/Dense>
#include <memory>

#include "physics/riesz_kernel.hpp"

namespace cpm {

class PairHessian {
 public:
  virtual ~PairHessian() = default;
  // Row k of `out` becomes Σ_{l≠k} ∇²W(x_k − x_l)(v_k − v_l): the pair-sum Hessian applied to v
  // (the Hessian of ½ Σ_{k≠l} W(x_k − x_l), a graph Laplacian with d × d weights).
  virtual void apply(const Eigen::MatrixXd& x, const Eigen::MatrixXd& v, Eigen::MatrixXd& out) = 0;
  // Row k of `blocks` (N × d²) becomes the d × d matrix Σ_{l≠k} ∇²W(x_k − x_l), row-major: the
  // diagonal block of that Hessian.
  virtual void diagonal_blocks(const Eigen::MatrixXd& x, Eigen::MatrixXd& blocks) = 0;
  // ∇²W(z) of one displacement.
  virtual Eigen::MatrixXd pair(const Eigen::VectorXd& z) const = 0;
};

std::unique_ptr<PairHessian> make_pair_hessian(const InteractionKernel& kernel);

}  // namespace cpm
