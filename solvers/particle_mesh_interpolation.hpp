#pragma once
// The grid steps of the particle-mesh sum (solvers/particle_mesh_sum.hpp), shared by the sum of
// one process and the sum over ranks (solvers/distributed_particle_mesh_sum.hpp), which applies
// them to its slab of the grid: the cloud-in-cell stencil of a particle, the deposit of a cell
// list's corner masses as a density, the centred differences of the potential, and the
// interpolation of potential and differences back to the particles with the same weights.
#include <Eigen/Dense>
#include <array>
#include <vector>

#include "core/grid.hpp"
#include "solvers/particle_mesh_cell_list.hpp"

namespace cpm {

// Cells the mesh adds beyond the particle box on every side: the stencil reaches 1, the centred
// difference 1 more.
constexpr int kMeshMargin = 2;

// The particle box [lower, upper] widened by the margin, with cells[a] cells along axis a
// (margin included). Throws std::invalid_argument for 4 cells or fewer on an axis.
Grid particle_mesh_grid(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                        const Eigen::VectorXi& cells);

class MeshInterpolation {
 public:
  explicit MeshInterpolation(const Grid& grid);

  // The stencil of particle k of x on the grid; false when its base cell along some axis lies
  // outside [kMeshMargin − 1, cells − kMeshMargin − 1] (too close to the edge for the stencil and
  // the differences) or a coordinate is not finite.
  bool stencil(const Eigen::MatrixXd& x, Eigen::Index k, MeshStencil& st) const;

  // density[j] = (mass the list's particles put on cell j) / cell volume, for cells j in
  // [first, last), summed over the 2^d corners in a fixed order.
  void deposit(const MeshCellList& list, double* density, Eigen::Index first,
               Eigen::Index last) const;

  // field[a · M + c] = (φ[c + s_a] − φ[c − s_a]) / (2 h_a) for the cells c in [first, last)
  // (M cells; the caller keeps c ± s_a inside the grid).
  void differences(const double* potential, double* field, Eigen::Index first,
                   Eigen::Index last) const;

  // For every sorted particle i of the list: gradient[a · N + i] = Σ_b w_b(i) field_a at corner b,
  // energy[i] = Σ_b w_b(i) φ at corner b (N = list.size()).
  void interpolate(const MeshCellList& list, const double* potential, const double* field,
                   double* gradient, double* energy) const;

  const Grid& grid() const { return grid_; }

 private:
  Grid grid_;
  int corners_ = 2;
  std::array<Eigen::Index, 8> corner_offset_{};  // cell of corner b less the base cell
};

}  // namespace cpm
