#pragma once
// Cell-integrated weights of the interaction W on a uniform grid with spacing h:
//     K_m = ∫_{C_m} W(z) dz,   C_m = m ∘ h + [−h/2, h/2]^d   (m an integer offset).
// For a piecewise-constant density with cell averages ρ_j, the potential at a cell centre is
//     (W∗ρ)(x_i) = Σ_j ρ_j ∫_{C_j} W(x_i − y) dy = Σ_j K_{i−j} ρ_j,
// exact for the piecewise-constant density, and finite for the integrable singular kernels
// |z|^{−s} (s < d) and −log|z|, whose singular cell m = 0 is an ordinary number here.
//
// How each weight is computed (once):
// - d = 1: exactly, from the antiderivative of W (numerically only for the mollified kernel);
// - d ≥ 2, m = 0: the cube is split into 2d pyramids with apex at the singularity; in each the
//   radial integral G(ρ) = ∫_0^ρ f(r) r^{d−1} dr is done in closed form, leaving the smooth face
//   integral  K_0 = Σ_faces ∫_face G(|u|) (h_a/2) |u|^{−d} du  to Gauss–Legendre quadrature;
// - d ≥ 2, m ≠ 0: tensor Gauss–Legendre, the order and subdivision chosen from the cell's
//   distance to the singularity (relative error below about 1e-11 in every cell).
#include <Eigen/Dense>
#include <vector>

#include "physics/riesz_kernel.hpp"

namespace cpm {

// K_m for one offset m (any signs).
double cell_integral(const InteractionKernel& kernel, const Eigen::VectorXd& spacing,
                     const Eigen::VectorXi& offset);

// G_d(ρ) = ∫_0^ρ f(r) r^{d−1} dr for the radial profile f(|z|) = W(z); the 1D case is the
// antiderivative of W on [0, ρ]. Each evaluator's radial_moment (physics/riesz_kernel.hpp).
double radial_moment(const InteractionKernel& kernel, int d, double rho);

// The table of K_m for 0 ≤ m_a < extent_a (W is even in every coordinate, so K_m = K_{|m|}),
// stored axis 0 fastest.
class CellIntegratedKernel {
 public:
  CellIntegratedKernel(const InteractionKernel& kernel, Eigen::VectorXd spacing,
                       Eigen::VectorXi extent);

  int dim() const { return static_cast<int>(extent_.size()); }
  const Eigen::VectorXi& extent() const { return extent_; }
  const Eigen::VectorXd& spacing() const { return spacing_; }
  const InteractionKernel& kernel() const { return kernel_; }
  // K at an offset with |offset_a| < extent_a.
  double operator()(const int* offset) const;
  const std::vector<double>& table() const { return table_; }

 private:
  InteractionKernel kernel_;
  Eigen::VectorXd spacing_;
  Eigen::VectorXi extent_;
  std::vector<double> table_;
};

}  // namespace cpm
