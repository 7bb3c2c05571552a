#include "solvers/distributed_fft_convolution.hpp"

#include <fftw3-mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "parallel/slab_decomposition.hpp"
#include "solvers/fftw_planner.hpp"

namespace cpm {

namespace {

// Offset of padded index p on an axis of n cells, circularly (as FftConvolution lays out the
// kernel): p < n is p, p = n repeats n − 1 (never reached by a difference of cells), p > n is p −
// 2n.
int circular_offset(int p, int n) {
  return p < n ? p : (p == n ? n - 1 : p - 2 * n);
}

long block(long n, int ranks) {
  return (n + ranks - 1) / ranks;
}

}  // namespace

DistributedFftConvolution::DistributedFftConvolution(const Grid& grid,
                                                     const InteractionKernel& kernel,
                                                     MPI_Comm communicator, FftPlanning planning)
    : dim_(grid.dim()),
      cells_(grid.cells()),
      padded_(2 * grid.cells()),
      weights_(kernel, grid.spacing(), grid.cells()) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(communicator, &rank);
  MPI_Comm_size(communicator, &ranks);
  const int s = dim_ - 1;  // the slab axis
  planes_ = cells_[s];
  const SlabDecomposition slabs(grid.lower()[s], grid.upper()[s], planes_, ranks);
  first_plane_ = slabs.first_plane(rank);
  plane_count_ = slabs.plane_count(rank);
  for (int a = 0; a < s; ++a) {
    plane_cells_ *= cells_[a];
    plane_padded_ *= padded_[a];
  }
  frequencies_ = dim_ == 1 ? 1 : plane_padded_ / padded_[0] * (padded_[0] / 2 + 1);
  double padded_size = 1.0;
  for (int a = 0; a < dim_; ++a) padded_size *= padded_[a];

  initialise_fftw_mpi();
  const ptrdiff_t shape[2] = {planes_, frequencies_};
  ptrdiff_t local_planes = 0, local_first_plane = 0, local_frequencies = 0,
            local_first_frequency = 0;
  const ptrdiff_t transpose_doubles = fftw_mpi_local_size_many_transposed(
      2, shape, 2, block(planes_, ranks), block(frequencies_, ranks), communicator, &local_planes,
      &local_first_plane, &local_frequencies, &local_first_frequency);
  if (local_planes != plane_count_ || (plane_count_ > 0 && local_first_plane != first_plane_))
    throw std::logic_error("distributed convolution: FFTW's slabs differ from the decomposition");
  // The frequency blocks the transposes use (block size ⌈F/P⌉). FFTW's local_n1 can report a
  // frequency to a rank the block layout leaves without one (seen with F = 1 on two ranks), so
  // the blocks are taken from the block size itself.
  const long frequency_block = block(frequencies_, ranks);
  first_frequency_ = std::min(frequencies_, frequency_block * rank);
  frequency_count_ = std::min(frequencies_, frequency_block * (rank + 1)) - first_frequency_;

  complex_count_ = static_cast<std::size_t>(std::max<ptrdiff_t>(
      {transpose_doubles / 2 + 1, plane_count_ * frequencies_, frequency_count_ * planes_, 1}));
  const auto padded_planes =
      static_cast<std::size_t>(std::max<Eigen::Index>(plane_count_ * plane_padded_, 1));
  plane_in_ = fftw_alloc_real(padded_planes);
  plane_out_ = fftw_alloc_real(padded_planes);
  spectra_ = fftw_alloc_complex(complex_count_);
  transposed_ = fftw_alloc_complex(complex_count_);
  columns_ =
      fftw_alloc_complex(static_cast<std::size_t>(std::max(frequency_count_ * 2 * planes_, 1L)));
  if (!plane_in_ || !plane_out_ || !spectra_ || !transposed_ || !columns_) throw std::bad_alloc();

  const bool measure = planning == FftPlanning::measure ||
                       (planning == FftPlanning::automatic && padded_size >= (1 << 18));
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    const PlanningThreads planning_threads(
        measure, padded_size / ranks >= (1 << 15) ? omp_get_max_threads() : 1);
    if (dim_ > 1 && plane_count_ > 0) {
      int shape_of_plane[2];  // FFTW is row-major: the plane's axes reversed
      for (int a = 0; a < s; ++a) shape_of_plane[a] = padded_[s - 1 - a];
      const int count = static_cast<int>(plane_count_), distance = static_cast<int>(plane_padded_),
                spectrum = static_cast<int>(frequencies_);
      plane_forward_ = fftw_plan_many_dft_r2c(s, shape_of_plane, count, plane_in_, nullptr, 1,
                                              distance, spectra_, nullptr, 1, spectrum, flags);
      plane_backward_ = fftw_plan_many_dft_c2r(s, shape_of_plane, count, spectra_, nullptr, 1,
                                               spectrum, plane_out_, nullptr, 1, distance, flags);
    }
    transpose_forward_ = fftw_mpi_plan_many_transpose(
        planes_, frequencies_, 2, block(planes_, ranks), block(frequencies_, ranks),
        reinterpret_cast<double*>(spectra_), reinterpret_cast<double*>(transposed_), communicator,
        flags);
    transpose_backward_ =
        fftw_mpi_plan_many_transpose(frequencies_, planes_, 2, block(frequencies_, ranks),
                                     block(planes_, ranks), reinterpret_cast<double*>(transposed_),
                                     reinterpret_cast<double*>(spectra_), communicator, flags);
    if (frequency_count_ > 0) {
      const int length = static_cast<int>(2 * planes_), count = static_cast<int>(frequency_count_);
      column_forward_ = fftw_plan_many_dft(1, &length, count, columns_, nullptr, 1, length,
                                           columns_, nullptr, 1, length, FFTW_FORWARD, flags);
      column_backward_ = fftw_plan_many_dft(1, &length, count, columns_, nullptr, 1, length,
                                            columns_, nullptr, 1, length, FFTW_BACKWARD, flags);
    }
  }
  if ((dim_ > 1 && plane_count_ > 0 && (!plane_forward_ || !plane_backward_)) ||
      !transpose_forward_ || !transpose_backward_ ||
      (frequency_count_ > 0 && (!column_forward_ || !column_backward_)))
    throw std::runtime_error("FFTW could not plan the distributed convolution");

  // The kernel's planes m_s = first_plane … on the padded plane grid, circularly along the other
  // axes; to the plane spectra and transposed.
  std::fill(plane_in_, plane_in_ + plane_count_ * plane_padded_, 0.0);
  for (long q = 0; q < plane_count_; ++q)
    for (Eigen::Index p = 0; p < plane_padded_; ++p) {
      int m[3] = {0, 0, 0};
      Eigen::Index rest = p;
      for (int a = 0; a < s; ++a) {
        m[a] = circular_offset(static_cast<int>(rest % padded_[a]), cells_[a]);
        rest /= padded_[a];
      }
      m[s] = static_cast<int>(first_plane_ + q);
      plane_in_[q * plane_padded_ + p] = weights_(m);
    }
  transform_planes_forward();
  fftw_execute(transpose_forward_);
  // Along the last axis the kernel is even: padded index p holds plane |circular_offset(p)|.
  const long length = 2 * planes_;
  for (long f = 0; f < frequency_count_; ++f)
    for (long p = 0; p < length; ++p) {
      const long m = std::abs(circular_offset(static_cast<int>(p), static_cast<int>(planes_)));
      columns_[f * length + p][0] = transposed_[f * planes_ + m][0];
      columns_[f * length + p][1] = transposed_[f * planes_ + m][1];
    }
  if (column_forward_) fftw_execute(column_forward_);
  kernel_spectrum_.resize(static_cast<std::size_t>(frequency_count_ * length));
  for (std::size_t k = 0; k < kernel_spectrum_.size(); ++k)
    kernel_spectrum_[k] = columns_[k][0] / padded_size;  // real: the kernel is even
  // The stiffness (FftConvolution::stiffness): K̂ against the symbol of the centred-difference
  // Laplacian, Σ_a (4/h_a²) sin²(π p_a/P_a), at this rank's frequencies, then over every rank.
  // A plane frequency f runs over (p_0 ∈ [0, P_0/2], p_1, …), p_0 fastest.
  for (long f = 0; f < frequency_count_; ++f) {
    double plane_laplacian = 0.0;
    long rest = first_frequency_ + f;
    for (int a = 0; a < s; ++a) {
      const long extent = a == 0 ? padded_[0] / 2 + 1 : padded_[a];
      const double sine =
          std::sin(std::numbers::pi * static_cast<double>(rest % extent) / padded_[a]);
      rest /= extent;
      plane_laplacian += 4.0 * sine * sine / (grid.spacing(a) * grid.spacing(a));
    }
    for (long p = 0; p < length; ++p) {
      const double sine = std::sin(std::numbers::pi * static_cast<double>(p) / length);
      const double laplacian =
          plane_laplacian + 4.0 * sine * sine / (grid.spacing(s) * grid.spacing(s));
      const double k = columns_[f * length + p][0];
      stiffness_repulsive_ = std::max(stiffness_repulsive_, laplacian * k);
      stiffness_attractive_ = std::max(stiffness_attractive_, -laplacian * k);
    }
  }
  double stiffness[2] = {stiffness_repulsive_, stiffness_attractive_};
  MPI_Allreduce(MPI_IN_PLACE, stiffness, 2, MPI_DOUBLE, MPI_MAX, communicator);
  stiffness_repulsive_ = stiffness[0];
  stiffness_attractive_ = stiffness[1];
  std::fill(plane_in_, plane_in_ + plane_count_ * plane_padded_, 0.0);
}

DistributedFftConvolution::~DistributedFftConvolution() {
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    for (fftw_plan plan : {plane_forward_, plane_backward_, transpose_forward_, transpose_backward_,
                           column_forward_, column_backward_})
      if (plan) fftw_destroy_plan(plan);
  }
  fftw_free(plane_in_);
  fftw_free(plane_out_);
  fftw_free(spectra_);
  fftw_free(transposed_);
  fftw_free(columns_);
}

template <class F>
void DistributedFftConvolution::for_each_local_row(F&& f) const {
  const Eigen::Index row = dim_ > 1 ? cells_[0] : 1, padded_row = dim_ > 1 ? padded_[0] : 1;
  const Eigen::Index rows_per_plane = plane_cells_ / row, rows = plane_count_ * rows_per_plane;
#pragma omp parallel for schedule(static) if (rows * row > 65536)
  for (Eigen::Index t = 0; t < rows; ++t) {
    const Eigen::Index q = t / rows_per_plane, r = t % rows_per_plane;
    f(q * plane_cells_ + r * row, q * plane_padded_ + r * padded_row, row);
  }
}

void DistributedFftConvolution::transform_planes_forward() {
  if (dim_ > 1) {
    if (plane_forward_) fftw_execute(plane_forward_);
    return;
  }
  for (long q = 0; q < plane_count_; ++q) {  // d = 1: a plane is one cell
    spectra_[q][0] = plane_in_[q];
    spectra_[q][1] = 0.0;
  }
}

void DistributedFftConvolution::transform_planes_backward() {
  if (dim_ > 1) {
    if (plane_backward_) fftw_execute(plane_backward_);
    return;
  }
  for (long q = 0; q < plane_count_; ++q) plane_out_[q] = spectra_[q][0];
}

void DistributedFftConvolution::convolve(const double* density, double* potential) {
  double start = MPI_Wtime();
  auto lap = [&start](double& total) {
    const double now = MPI_Wtime();
    total += now - start;
    start = now;
  };
  for_each_local_row([&](Eigen::Index c, Eigen::Index p, Eigen::Index n) {
    std::memcpy(plane_in_ + p, density + c, sizeof(double) * static_cast<std::size_t>(n));
  });
  transform_planes_forward();
  lap(times_.planes);
  fftw_execute(transpose_forward_);
  lap(times_.transposes);
  const long length = 2 * planes_;
#pragma omp parallel for schedule(static) if (frequency_count_ * length > 65536)
  for (long f = 0; f < frequency_count_; ++f) {
    fftw_complex* column = columns_ + f * length;
    std::memcpy(column, transposed_ + f * planes_, sizeof(fftw_complex) * planes_);
    std::memset(column + planes_, 0, sizeof(fftw_complex) * planes_);
  }
  if (column_forward_) fftw_execute(column_forward_);
  const double* k = kernel_spectrum_.data();
  const long n = frequency_count_ * length;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (long i = 0; i < n; ++i) {
    columns_[i][0] *= k[i];
    columns_[i][1] *= k[i];
  }
  if (column_backward_) fftw_execute(column_backward_);
#pragma omp parallel for schedule(static) if (frequency_count_ * length > 65536)
  for (long f = 0; f < frequency_count_; ++f)
    std::memcpy(transposed_ + f * planes_, columns_ + f * length, sizeof(fftw_complex) * planes_);
  lap(times_.columns);
  fftw_execute(transpose_backward_);
  lap(times_.transposes);
  transform_planes_backward();
  for_each_local_row([&](Eigen::Index c, Eigen::Index p, Eigen::Index n) {
    std::memcpy(potential + c, plane_out_ + p, sizeof(double) * static_cast<std::size_t>(n));
  });
  lap(times_.planes);
}

double DistributedFftConvolution::memory_bytes() const {
  const double planes =
      static_cast<double>(std::max<Eigen::Index>(plane_count_ * plane_padded_, 1));
  return 2.0 * planes * sizeof(double) + 2.0 * complex_count_ * sizeof(fftw_complex) +
         static_cast<double>(std::max(frequency_count_ * 2 * planes_, 1L)) * sizeof(fftw_complex) +
         kernel_spectrum_.size() * sizeof(double);
}

}  // namespace cpm
