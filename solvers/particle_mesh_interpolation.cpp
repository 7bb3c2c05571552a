#include "solvers/particle_mesh_interpolation.hpp"

#include <cmath>
#include <stdexcept>

namespace cpm {

Grid particle_mesh_grid(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                        const Eigen::VectorXi& cells) {
  if ((cells.array() <= 2 * kMeshMargin).any())
    throw std::invalid_argument("the particle-mesh grid needs more than 4 cells per axis");
  const Eigen::VectorXd h =
      (upper - lower).array() / (cells.array() - 2 * kMeshMargin).cast<double>();
  const Eigen::VectorXd grid_lower = lower - kMeshMargin * h, grid_upper = upper + kMeshMargin * h;
  return Grid(Domain::box(grid_lower, grid_upper), grid_lower, grid_upper, cells);
}

MeshInterpolation::MeshInterpolation(const Grid& grid) : grid_(grid) {
  corners_ = 1 << grid_.dim();
  for (int b = 0; b < corners_; ++b)
    for (int a = 0; a < grid_.dim(); ++a)
      if ((b >> a) & 1) corner_offset_[b] += grid_.stride(a);
}

bool MeshInterpolation::stencil(const Eigen::MatrixXd& x, Eigen::Index k, MeshStencil& st) const {
  st = MeshStencil{};
  for (int a = 0; a < grid_.dim(); ++a) {
    // Position in units of cells, measured from the first cell centre.
    const double u = (x(k, a) - grid_.lower()[a]) / grid_.spacing(a) - 0.5;
    const double base = std::floor(u);
    if (!(base >= kMeshMargin - 1 && base <= grid_.cells(a) - kMeshMargin - 1)) return false;
    st.t[a] = u - base;
    st.cell[a] = static_cast<int>(base);
    st.base += static_cast<Eigen::Index>(base) * grid_.stride(a);
  }
  return true;
}

void MeshInterpolation::deposit(const MeshCellList& list, double* density, Eigen::Index first,
                                Eigen::Index last) const {
  // Cell j receives the corner masses of the base cells j − b (in a fixed order, so the sums do
  // not depend on the thread count).
  const double inverse_volume = 1.0 / grid_.cell_volume();
  const double* mass = list.corner_mass();
#pragma omp parallel for schedule(static)
  for (Eigen::Index j = first; j < last; ++j) {
    double sum = 0.0;
    for (int b = 0; b < corners_; ++b)
      if (j >= corner_offset_[b]) sum += mass[(j - corner_offset_[b]) * corners_ + b];
    density[j] = sum * inverse_volume;
  }
}

void MeshInterpolation::differences(const double* potential, double* field, Eigen::Index first,
                                    Eigen::Index last) const {
  const Eigen::Index cells = grid_.size();
  for (int a = 0; a < grid_.dim(); ++a) {
    const Eigen::Index s = grid_.stride(a);
    const double scale = 1.0 / (2.0 * grid_.spacing(a));
    double* f = field + a * cells;
#pragma omp parallel for schedule(static)
    for (Eigen::Index c = first; c < last; ++c)
      f[c] = (potential[c + s] - potential[c - s]) * scale;
  }
}

void MeshInterpolation::interpolate(const MeshCellList& list, const double* potential,
                                    const double* field, double* gradient, double* energy) const {
  const int d = grid_.dim();
  const Eigen::Index n = list.size(), cells = grid_.size();
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index base = list.base()[i];
    std::array<double, 3> mesh_gradient{};
    double phi = 0.0;
    for (int b = 0; b < corners_; ++b) {
      double w = 1.0;  // the CIC weight of corner b
      for (int a = 0; a < d; ++a) {
        const double t = list.fraction(a)[i];
        w *= (b >> a) & 1 ? t : 1.0 - t;
      }
      const Eigen::Index c = base + corner_offset_[b];
      phi += w * potential[c];
      for (int a = 0; a < d; ++a) mesh_gradient[a] += w * field[a * cells + c];
    }
    for (int a = 0; a < d; ++a) gradient[a * n + i] = mesh_gradient[a];
    energy[i] = phi;
  }
}

}  // namespace cpm
