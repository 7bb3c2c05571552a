#include "solvers/fft_convolution.hpp"

#include <omp.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "solvers/fftw_planner.hpp"

namespace cpm {

namespace {

Eigen::Index product(const Eigen::VectorXi& v) {
  Eigen::Index p = 1;
  for (Eigen::Index a = 0; a < v.size(); ++a) p *= v[a];
  return p;
}

// Calls f(cell_row_start, padded_row_start) for every row along axis 0.
template <class F>
void for_each_row(const Eigen::VectorXi& cells, const Eigen::VectorXi& padded, F&& f) {
  const int d = static_cast<int>(cells.size());
  const Eigen::Index n1 = d > 1 ? cells[1] : 1, n2 = d > 2 ? cells[2] : 1;
  const Eigen::Index p0 = padded[0], p1 = d > 1 ? padded[1] : 1;
  const Eigen::Index rows = n1 * n2;
#pragma omp parallel for schedule(static) if (rows * cells[0] > 65536)
  for (Eigen::Index r = 0; r < rows; ++r) {
    const Eigen::Index i1 = r % n1, i2 = r / n1;
    f(cells[0] * r, p0 * (i1 + p1 * i2));
  }
}

}  // namespace

std::string export_fft_wisdom() {
  initialise_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  char* text = fftw_export_wisdom_to_string();
  if (!text) return "";
  std::string wisdom(text);
  fftw_free(text);
  return wisdom;
}

bool import_fft_wisdom(const std::string& wisdom) {
  initialise_fftw_threads();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  return fftw_import_wisdom_from_string(wisdom.c_str()) != 0;
}

FftConvolution::FftConvolution(const Grid& grid, const InteractionKernel& kernel,
                               FftPlanning planning)
    : cells_(grid.cells()),
      padded_(2 * grid.cells()),
      size_(grid.size()),
      padded_size_(product(2 * grid.cells())),
      weights_(kernel, grid.spacing(), grid.cells()) {
  const int d = grid.dim();
  spectrum_size_ = padded_size_ / padded_[0] * (padded_[0] / 2 + 1);
  padded_in_ = fftw_alloc_real(static_cast<std::size_t>(padded_size_));
  padded_out_ = fftw_alloc_real(static_cast<std::size_t>(padded_size_));
  spectrum_ = fftw_alloc_complex(static_cast<std::size_t>(spectrum_size_));
  if (!padded_in_ || !padded_out_ || !spectrum_) throw std::bad_alloc();

  // FFTW is row-major (last index fastest); the grid runs axis 0 fastest: reverse the axes.
  int shape[3];
  for (int a = 0; a < d; ++a) shape[a] = padded_[d - 1 - a];
  const bool measure = planning == FftPlanning::measure ||
                       (planning == FftPlanning::automatic && padded_size_ >= (1 << 18));
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  initialise_fftw_threads();
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    const PlanningThreads planning_threads(measure,
                                           padded_size_ >= (1 << 15) ? omp_get_max_threads() : 1);
    forward_ = fftw_plan_dft_r2c(d, shape, padded_in_, spectrum_, flags);
    backward_ = fftw_plan_dft_c2r(d, shape, spectrum_, padded_out_, flags);
  }
  if (!forward_ || !backward_) throw std::runtime_error("FFTW could not plan the convolution");

  // The kernel on the padded grid, circularly: offset m_a at index m_a mod 2n_a. The index n_a is
  // never reached by i − j; it repeats offset n_a − 1, so the periodic sequence has no jump there
  // (a jump would only add spurious high frequencies to stiffness()). It is even, so its spectrum
  // is real.
  for (Eigen::Index p = 0; p < padded_size_; ++p) {
    Eigen::Index rest = p;
    int m[3] = {0, 0, 0};
    for (int a = 0; a < d; ++a) {
      const int pa = static_cast<int>(rest % padded_[a]);
      rest /= padded_[a];
      m[a] = pa < cells_[a] ? pa : (pa == cells_[a] ? pa - 1 : pa - padded_[a]);
    }
    padded_in_[p] = weights_(m);
  }
  fftw_execute(forward_);
  kernel_spectrum_.resize(static_cast<std::size_t>(spectrum_size_));
  const double scale = 1.0 / static_cast<double>(padded_size_);
  for (Eigen::Index k = 0; k < spectrum_size_; ++k) kernel_spectrum_[k] = spectrum_[k][0] * scale;
  // Spectrum index k runs over (p_0 ∈ [0, P_0/2], p_1 ∈ [0, P_1), p_2 ∈ [0, P_2)), p_0 fastest.
  const Eigen::Index half = padded_[0] / 2 + 1;
  for (Eigen::Index k = 0; k < spectrum_size_; ++k) {
    Eigen::Index rest = k;
    double laplacian = 0.0;
    for (int a = 0; a < d; ++a) {
      const Eigen::Index extent = a == 0 ? half : padded_[a];
      const double p = static_cast<double>(rest % extent);
      rest /= extent;
      const double h = grid.spacing(a), sine = std::sin(std::numbers::pi * p / padded_[a]);
      laplacian += 4.0 * sine * sine / (h * h);
    }
    stiffness_repulsive_ = std::max(stiffness_repulsive_, laplacian * spectrum_[k][0]);
    stiffness_attractive_ = std::max(stiffness_attractive_, -laplacian * spectrum_[k][0]);
  }
  std::fill(padded_in_, padded_in_ + padded_size_, 0.0);
}

FftConvolution::~FftConvolution() {
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    if (forward_) fftw_destroy_plan(forward_);
    if (backward_) fftw_destroy_plan(backward_);
  }
  fftw_free(padded_in_);
  fftw_free(padded_out_);
  fftw_free(spectrum_);
}

void FftConvolution::copy_into_padded(const double* cells, double* padded) const {
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(cells_[0]);
  for_each_row(cells_, padded_,
               [&](Eigen::Index c, Eigen::Index p) { std::memcpy(padded + p, cells + c, bytes); });
}

void FftConvolution::copy_from_padded(const double* padded, double* cells) const {
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(cells_[0]);
  for_each_row(cells_, padded_,
               [&](Eigen::Index c, Eigen::Index p) { std::memcpy(cells + c, padded + p, bytes); });
}

void FftConvolution::convolve(const double* density_cells, double* potential_cells) {
  copy_into_padded(density_cells, padded_in_);
  fftw_execute(forward_);
  const double* k = kernel_spectrum_.data();
  const Eigen::Index n = spectrum_size_;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (Eigen::Index i = 0; i < n; ++i) {
    spectrum_[i][0] *= k[i];
    spectrum_[i][1] *= k[i];
  }
  fftw_execute(backward_);
  copy_from_padded(padded_out_, potential_cells);
}

void direct_convolution(const CellIntegratedKernel& weights, const Eigen::VectorXi& cells,
                        const double* density, double* potential) {
  const int d = static_cast<int>(cells.size());
  const Eigen::Index m = product(cells);
  auto coordinates = [&](Eigen::Index c, int* i) {
    for (int a = 0; a < d; ++a) {
      i[a] = static_cast<int>(c % cells[a]);
      c /= cells[a];
    }
  };
#pragma omp parallel for schedule(static)
  for (Eigen::Index target = 0; target < m; ++target) {
    int i[3], j[3], offset[3];
    coordinates(target, i);
    double sum = 0.0;
    for (Eigen::Index source = 0; source < m; ++source) {
      coordinates(source, j);
      for (int a = 0; a < d; ++a) offset[a] = i[a] - j[a];
      sum += weights(offset) * density[source];
    }
    potential[target] = sum;
  }
}

}  // namespace cpm
