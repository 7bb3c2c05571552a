#pragma once
// W∗ρ on a Grid by zero-padded FFT with the cell-integrated weights K_m of
// solvers/cell_integrated_kernel.hpp. Built once per (grid shape, kernel): weights, their
// spectrum, FFTW plans and buffers; convolve() then allocates nothing.
//
// Sign and normalisation (what convolve computes):
//     potential[i] = Σ_j K_{i−j} density[j],      K_m = ∫_{C_m} W(z) dz,
// - density[j] is the AVERAGE of ρ over cell j (mass per unit volume, not mass per cell);
// - potential[i] is (W∗ρ)(x_i) = ∫ W(x_i − y) ρ(y) dy at the centre x_i of cell i, exact for
//   the piecewise-constant density: no factor λ, no minus sign, no cell volume;
// - both arrays hold every cell of the grid, axis 0 fastest (Grid's order); cells outside the
//   domain are inputs like any other, so keep the density zero there.
// The sum is linear (not circular): the grid is padded to 2n_a cells per axis.
//
// For a particle-mesh force: deposit each particle's mass m_k/(cell volume) into its cell (or
// with a cloud-in-cell stencil), convolve, take a centred difference of `potential` for ∇(W∗ρ)
// and interpolate back to the particles with the same stencil.
//
// Thread safety: one object must not be used by two threads at once (it owns its buffers);
// separate objects may be built, used and destroyed concurrently (FFTW's planner is serialised).
#include <fftw3.h>
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "physics/riesz_kernel.hpp"
#include "solvers/cell_integrated_kernel.hpp"

namespace cpm {

// FFTW_ESTIMATE plans instantly and deterministically. FFTW_MEASURE times candidate plans (about
// 1 s for a 1,024² padded grid) and then runs about 1.6× faster, but the plan it picks, and so the
// last bits of the result, may change from run to run. `automatic` measures when the padded grid
// has at least 2^18 points (512² cells in 2D) and estimates below.
enum class FftPlanning { estimate, measure, automatic };

class FftConvolution {
 public:
  FftConvolution(const Grid& grid, const InteractionKernel& kernel,
                 FftPlanning planning = FftPlanning::automatic);
  ~FftConvolution();
  FftConvolution(const FftConvolution&) = delete;
  FftConvolution& operator=(const FftConvolution&) = delete;

  // potential_cells[i] = Σ_j K_{i−j} density_cells[j] for all M cells (arrays of length M;
  // they may not alias).
  void convolve(const double* density_cells, double* potential_cells);

  const CellIntegratedKernel& weights() const { return weights_; }
  const Eigen::VectorXi& cells() const { return cells_; }
  Eigen::Index size() const { return size_; }

  // The largest decay rate of the linear map ρ ↦ λ∇_h·∇_h(K∗ρ) (centred differences): the
  // maximum over the padded grid's frequencies θ of  Σ_a (4/h_a²) sin²(θ_a/2) · max(λK̂(θ), 0).
  // Linearised about a density ρ̄, the drift λ∇·(ρ∇(W∗ρ)) has decay rates up to
  // max(ρ̄) · stiffness(λ), which explicit time steps must resolve: for repulsive Riesz kernels
  // with s > d − 1 they outgrow the CFL rate as h → 0.
  double stiffness(double lambda) const {
    return lambda >= 0.0 ? lambda * stiffness_repulsive_ : -lambda * stiffness_attractive_;
  }

 private:
  void copy_into_padded(const double* cells, double* padded) const;
  void copy_from_padded(const double* padded, double* cells) const;

  Eigen::VectorXi cells_, padded_;
  Eigen::Index size_ = 0, padded_size_ = 0, spectrum_size_ = 0;
  CellIntegratedKernel weights_;
  double* padded_in_ = nullptr;  // zero outside the first n_a cells of every axis
  double* padded_out_ = nullptr;
  fftw_complex* spectrum_ = nullptr;
  std::vector<double> kernel_spectrum_;  // real (K is even), scaled by 1 / padded_size_
  double stiffness_repulsive_ = 0.0, stiffness_attractive_ = 0.0;  // with K̂ > 0 and K̂ < 0
  fftw_plan forward_ = nullptr, backward_ = nullptr;
};

// FFTW's wisdom: the plans FFTW_MEASURE chose in this process, as text, and its import. A run
// saves it with every checkpoint and a restart imports it before planning, so a measured plan,
// and with it the last bits of W∗ρ, is the one the interrupted run used (same thread count).
std::string export_fft_wisdom();
bool import_fft_wisdom(const std::string& wisdom);  // false if FFTW rejects the text

// The same sum done directly in O(M²): the reference the FFT path is tested against.
void direct_convolution(const CellIntegratedKernel& weights, const Eigen::VectorXi& cells,
                        const double* density_cells, double* potential_cells);

}  // namespace cpm
