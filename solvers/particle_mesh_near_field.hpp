#pragma once
// The short-range (P³M-style) correction of the particle-mesh sum. The mesh smooths pairs closer
// than a few cells; for those pairs the force the mesh transmits is taken out exactly and the
// exact pair force put in:
//     ∇_k = mesh_k − Σ_{l ∈ S(k)} mesh_{k←l} + Σ_{l ∈ S(k), l ≠ k} ∇W(x_k − x_l),
// where mesh_k is the interpolated mesh gradient, mesh_{k←l} the part of it that l's deposit
// produces, and S(k) the particles whose stencil base cell is at most R cells from k's along
// every axis, k itself included (which removes the self term). The relation is symmetric, so
// each near pair is exact in both directions; pairs farther apart keep the mesh force.
//
// How mesh_{k←l} is obtained without a per-pair formula: the mesh is linear in the deposit, so
// Σ_{l ∈ S} mesh_{k←l} is the mesh applied to the deposit of S alone. That deposit lives on the
// (2R + 2)^d cells around k's base cell, and the potential and its centred differences at the
// 2^d corners of k's stencil are a fixed linear map of it (LocalMeshResponse), built once from
// the same cell-integrated weights K_m the FFT convolution uses. All particles of a base cell
// share S, so the map is applied once per cell. The energy is corrected the same way.
//
// With R < 0 only the self term is removed: the plain mesh.
#include <Eigen/Dense>
#include <vector>

#include "physics/riesz_kernel.hpp"
#include "solvers/cell_integrated_kernel.hpp"
#include "solvers/particle_mesh_cell_list.hpp"

namespace cpm {

// The largest near range R the correction supports.
constexpr int kMaxNearCells = 3;

// The mesh's response at the corners of one stencil to the deposit on a block of cells.
// Block cell j (index Σ_a j_a L^a, L = 2R + 2) is the cell at offset j − R from the base cell;
// block values are deposited masses (CIC weights, not divided by the cell volume). apply()
// returns, for corner b (offset b ∈ {0, 1}^d from the base cell),
//     terms[b]               = φ(b) = Σ_j K_{b−(j−R)} block[j] / h^d,
//     terms[(1 + a) 2^d + b] = (φ(b + e_a) − φ(b − e_a)) / (2 h_a),
// exactly what the FFT convolution and the centred differences give for that deposit.
class LocalMeshResponse {
 public:
  LocalMeshResponse(const CellIntegratedKernel& weights, int radius);

  int side() const { return side_; }
  int block_size() const { return columns_; }
  int terms() const { return rows_; }
  void apply(const double* block, double* terms) const;

 private:
  int side_, rows_, columns_;
  std::vector<double> map_;  // columns_ × rows_: column j of the map at [j · rows_, (j + 1) rows_)
};

class NearFieldCorrection {
 public:
  // `weights` are the convolution's cell-integrated weights on the mesh (grid_cells cells per
  // axis); pairs with base cells at most near_cells apart are made exact (−1: self term only).
  NearFieldCorrection(const InteractionKernel& kernel, const CellIntegratedKernel& weights,
                      const Eigen::VectorXi& grid_cells, int near_cells);

  // Adds the correction to the mesh gradient and, if `energy` is non-null, to the per-particle
  // pair energies, both in the list's sorted order: particle i's gradient component a at
  // gradient[a · N + i], its energy at energy[i]. Parallel over cells; every particle's sum has
  // a fixed order, so the result does not depend on the thread count.
  void apply(const MeshCellList& list, double* gradient, double* energy) const;

  int near_cells() const { return near_cells_; }

 private:
  template <int D, bool Energy, class SimdEvaluator>
  void correct_cells(const SimdEvaluator& w, const MeshCellList& list, double* gradient,
                     double* energy) const;
  template <int D>
  void remove_self(const MeshCellList& list, double* gradient, double* energy) const;

  InteractionKernel kernel_;
  int d_, near_cells_;
  Eigen::VectorXi cells_;
  Eigen::Index stride_[3] = {1, 1, 1};
  LocalMeshResponse response_;
};

}  // namespace cpm
