#pragma once
// W∗ρ of solvers/fft_convolution.hpp (the same cell-integrated weights, the same zero padding,
// the same result to rounding) for a grid cut over the ranks of a communicator into slabs of
// planes along its last axis s = d − 1 (docs/distributed.md §5): a rank holds the planes
// [first_plane, first_plane + plane_count) in SlabDecomposition's layout (blocks of ⌈n_s/P⌉), a
// contiguous block of cells in the grid's order (axis 0 fastest). The padded transform is split:
//   1. each local plane, zero-padded to 2n_a along the other axes, by a (d − 1)-dimensional real
//      FFT (d = 1: the plane is one cell);
//   2. FFTW's MPI transpose (fftw_mpi_plan_many_transpose): each rank then holds a block of the
//      plane frequencies, each with all n_s planes;
//   3. along the last axis: zero-padded to 2n_s, a complex FFT, times the kernel's spectrum, the
//      inverse FFT, the first n_s values kept;
//   4. the transpose back and the inverse plane transforms.
// The padding of the last axis is added after the transpose, so it is never sent. The kernel's
// spectrum is made the same way from its planes m_s = 0 … n_s − 1 (the kernel is even, so they
// determine its padded sequence); no rank holds the whole grid, and memory per rank falls like
// 1/P. Plans and buffers are made once; convolve() allocates nothing.
#include <fftw3.h>
#include <mpi.h>

#include <Eigen/Dense>
#include <vector>

#include "core/grid.hpp"
#include "solvers/fft_convolution.hpp"

namespace cpm {

// Seconds spent in convolve() by its parts, summed over calls (MPI_Wtime): the batched plane
// transforms, the two MPI transposes (waiting for the slowest rank included) and the transforms
// along the last axis with the kernel's product.
struct ConvolutionTimes {
  double planes = 0.0, transposes = 0.0, columns = 0.0;
};

class DistributedFftConvolution {
 public:
  // Collective over `communicator` (every rank passes the same grid and kernel).
  DistributedFftConvolution(const Grid& grid, const InteractionKernel& kernel,
                            MPI_Comm communicator, FftPlanning planning = FftPlanning::automatic);
  ~DistributedFftConvolution();
  DistributedFftConvolution(const DistributedFftConvolution&) = delete;
  DistributedFftConvolution& operator=(const DistributedFftConvolution&) = delete;

  long first_plane() const { return first_plane_; }
  long plane_count() const { return plane_count_; }
  // Cells in one plane, and the cells this rank holds (plane_count · plane_size).
  Eigen::Index plane_size() const { return plane_cells_; }
  Eigen::Index local_size() const { return plane_count_ * plane_cells_; }

  // potential_cells = K ∗ density_cells on this rank's planes (arrays of local_size() cells in
  // the grid's order; they may not alias). Collective.
  void convolve(const double* density_cells, double* potential_cells);

  const CellIntegratedKernel& weights() const { return weights_; }
  // FftConvolution::stiffness of the whole grid (the maxima over every rank's frequencies).
  double stiffness(double lambda) const {
    return lambda >= 0.0 ? lambda * stiffness_repulsive_ : -lambda * stiffness_attractive_;
  }
  const ConvolutionTimes& times() const { return times_; }
  // Bytes of the buffers this rank holds (plans excluded).
  double memory_bytes() const;

 private:
  void transform_planes_forward();   // plane_in_ → spectra_
  void transform_planes_backward();  // spectra_ → plane_out_
  // Calls f(cell offset, padded offset) for every row (along axis 0) of the local planes.
  template <class F>
  void for_each_local_row(F&& f) const;

  int dim_;
  Eigen::VectorXi cells_, padded_;
  long planes_ = 1, first_plane_ = 0, plane_count_ = 0;
  long frequencies_ = 1, first_frequency_ = 0, frequency_count_ = 0;
  Eigen::Index plane_cells_ = 1, plane_padded_ = 1;
  CellIntegratedKernel weights_;
  double* plane_in_ = nullptr;           // the local planes, zero-padded (the padding stays zero)
  double* plane_out_ = nullptr;          // the inverse plane transforms
  fftw_complex* spectra_ = nullptr;      // (local plane, frequency), before the transpose
  fftw_complex* transposed_ = nullptr;   // (local frequency, plane), after it
  fftw_complex* columns_ = nullptr;      // (local frequency, 2n_s): the padded last axis
  std::vector<double> kernel_spectrum_;  // (local frequency, 2n_s), real, scaled by 1/padded size
  fftw_plan plane_forward_ = nullptr, plane_backward_ = nullptr;
  fftw_plan transpose_forward_ = nullptr, transpose_backward_ = nullptr;
  fftw_plan column_forward_ = nullptr, column_backward_ = nullptr;
  std::size_t complex_count_ = 0;  // of spectra_ and transposed_
  double stiffness_repulsive_ = 0.0, stiffness_attractive_ = 0.0;
  ConvolutionTimes times_;
};

}  // namespace cpm
