#pragma once
// The particle-mesh sum's view of the particles: each particle's cloud-in-cell stencil on the
// mesh, and the particles binned by the base cell of that stencil (a cell list on the mesh
// itself), for the near-field correction of solvers/particle_mesh_near_field.hpp.
#include <Eigen/Dense>
#include <array>
#include <vector>

namespace cpm {

// Cloud-in-cell stencil of one particle: the corners are the 2^d cell centres around it. The
// cell `base` (multi-index `cell`) holds the corner with all bits 0; corner b (bit a set: +1
// along axis a) has weight Π_a (b_a ? t_a : 1 − t_a), where t_a ∈ [0, 1) is the particle's
// position between the cell centres in units of the spacing.
struct MeshStencil {
  Eigen::Index base = 0;
  std::array<int, 3> cell{};
  std::array<double, 3> t{};
};

// Particles sorted by base cell (counting sort; within a cell in particle order), with their
// positions, stencil fractions and base cells copied in that order, structure of arrays, and
// each cell's deposit on the corners of its particles' stencils. Because the cells are numbered
// axis 0 fastest, the particles of a run of consecutive cells along axis 0 are one contiguous
// range. Each coordinate array is followed by kPadding zeros, so that a SIMD load starting inside
// it stays in bounds. Storage grows to the largest N seen and is reused: build() allocates nothing
// once it has seen N particles.
class MeshCellList {
 public:
  MeshCellList(Eigen::Index cells, int d);

  void build(const Eigen::Ref<const Eigen::MatrixXd>& x, const std::vector<MeshStencil>& stencils);

  // Sorted particles [begin(c), begin(c + 1)) have base cell c; begin(cells) is N.
  Eigen::Index begin(Eigen::Index cell) const { return start_[static_cast<std::size_t>(cell)]; }
  Eigen::Index size() const { return n_; }
  const double* position(int axis) const { return position_.data() + axis * stride_; }
  const double* fraction(int axis) const { return fraction_.data() + axis * capacity_; }
  const Eigen::Index* base() const { return base_.data(); }          // base cell
  const int* cell0() const { return cell0_.data(); }                 // its index along axis 0
  const Eigen::Index* particle() const { return particle_.data(); }  // row of x
  // The CIC mass the particles of base cell c put on corner b of their stencils:
  // corner_mass()[c · 2^d + b] = Σ_{i in c} w_b(i), summed in sorted order.
  const double* corner_mass() const { return corner_mass_.data(); }

  static constexpr Eigen::Index kPadding = 16;

 private:
  int d_;
  Eigen::Index n_ = 0, capacity_ = 0, stride_ = 0;  // stride_ = capacity_ + kPadding
  std::vector<Eigen::Index> start_;                 // cells + 1 entries
  std::vector<double> position_;  // axis a at [a · stride, a · stride + N), zeros after
  std::vector<double> fraction_;  // axis a at [a · capacity, a · capacity + N)
  std::vector<double> corner_mass_;
  std::vector<Eigen::Index> base_, particle_;
  std::vector<int> cell0_;
};

}  // namespace cpm
