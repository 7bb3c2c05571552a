#include "solvers/particle_mesh_sum.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/grid.hpp"
#include "solvers/fft_convolution.hpp"
#include "solvers/particle_mesh_cell_list.hpp"
#include "solvers/particle_mesh_near_field.hpp"

namespace cpm {

Eigen::VectorXi default_mesh_cells(Eigen::Index n, int d) {
  const int max_log2[] = {0, 20, 9, 6};
  if (d < 1 || d > 3) throw std::invalid_argument("the particle-mesh sum needs d = 1, 2 or 3");
  const double target = std::pow(static_cast<double>(std::max<Eigen::Index>(n, 1)), 1.0 / d) / 2;
  const int log2 =
      std::clamp(static_cast<int>(std::lround(std::log2(std::max(target, 1.0)))), 5, max_log2[d]);
  return Eigen::VectorXi::Constant(d, 1 << log2);
}

namespace {

constexpr int kMargin = 2;  // cells beyond the particle box: CIC reaches 1, the difference 1 more

// The particle box widened by the margin, with cells[a] cells along axis a.
Grid padded_grid(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                 const Eigen::VectorXi& cells) {
  if ((cells.array() <= 2 * kMargin).any())
    throw std::invalid_argument("the particle-mesh grid needs more than 4 cells per axis");
  const Eigen::VectorXd h = (upper - lower).array() / (cells.array() - 2 * kMargin).cast<double>();
  const Eigen::VectorXd grid_lower = lower - kMargin * h, grid_upper = upper + kMargin * h;
  return Grid(Domain::box(grid_lower, grid_upper), grid_lower, grid_upper, cells);
}

class ParticleMeshSum final : public InteractionSum {
 public:
  ParticleMeshSum(const InteractionKernel& kernel, const Eigen::VectorXd& lower,
                  const Eigen::VectorXd& upper, const Eigen::VectorXi& cells, int near_cells)
      : grid_(padded_grid(lower, upper, cells)),
        convolution_(grid_, kernel),
        near_field_(kernel, convolution_.weights(), grid_.cells(), near_cells),
        cell_list_(grid_.size(), grid_.dim()),
        density_(static_cast<std::size_t>(grid_.size())),
        potential_(density_.size()),
        field_(density_.size() * static_cast<std::size_t>(grid_.dim())) {
    corners_ = 1 << grid_.dim();
    for (int b = 0; b < corners_; ++b)
      for (int a = 0; a < grid_.dim(); ++a)
        if ((b >> a) & 1) corner_offset_[b] += grid_.stride(a);
  }

  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override {
    const int d = grid_.dim();
    if (x.cols() != d) throw std::invalid_argument("particle-mesh sum: wrong particle dimension");
    const Eigen::Index n = x.rows();
    stencils_.resize(static_cast<std::size_t>(n));
    bool inside = true;
#pragma omp parallel for schedule(static) reduction(&& : inside)
    for (Eigen::Index k = 0; k < n; ++k) inside = stencil(x, k, stencils_[k]) && inside;
    if (!inside) throw std::out_of_range("particle-mesh sum: a particle left the box of the mesh");
    cell_list_.build(x, stencils_);

    // 1. Deposit: cell j receives the corner masses of the base cells j − b (in a fixed order, so
    //    the sums do not depend on the thread count).
    const double inverse_volume = 1.0 / grid_.cell_volume();
    const double* mass = cell_list_.corner_mass();
#pragma omp parallel for schedule(static)
    for (Eigen::Index j = 0; j < grid_.size(); ++j) {
      double sum = 0.0;
      for (int b = 0; b < corners_; ++b)
        if (j >= corner_offset_[b]) sum += mass[(j - corner_offset_[b]) * corners_ + b];
      density_[j] = sum * inverse_volume;
    }

    // 2. φ = K ∗ ρ.
    convolution_.convolve(density_.data(), potential_.data());

    // 3. Centred differences (meaningless in the first and last cell of a grid line, which no
    //    stencil reads).
    const Eigen::Index cells = grid_.size();
    for (int a = 0; a < d; ++a) {
      const Eigen::Index s = grid_.stride(a);
      const double scale = 1.0 / (2.0 * grid_.spacing(a));
      double* field = field_.data() + a * cells;
#pragma omp parallel for schedule(static)
      for (Eigen::Index c = s; c < cells - s; ++c)
        field[c] = (potential_[c + s] - potential_[c - s]) * scale;
    }

    // 4. Interpolate back, in the list's order: component a of particle i at
    //    sorted_gradient_[a · N + i], its energy at sorted_energy_[i].
    if (sorted_energy_.size() < static_cast<std::size_t>(n)) {
      sorted_energy_.resize(static_cast<std::size_t>(n));
      sorted_gradient_.resize(static_cast<std::size_t>(n * d));
    }
#pragma omp parallel for schedule(static)
    for (Eigen::Index i = 0; i < n; ++i) {
      const Eigen::Index base = cell_list_.base()[i];
      std::array<double, 3> mesh_gradient{};
      double phi = 0.0;
      for (int b = 0; b < corners_; ++b) {
        const double w = corner_weight(i, b);
        const Eigen::Index c = base + corner_offset_[b];
        phi += w * potential_[c];
        for (int a = 0; a < d; ++a) mesh_gradient[a] += w * field_[a * cells + c];
      }
      for (int a = 0; a < d; ++a) sorted_gradient_[a * n + i] = mesh_gradient[a];
      sorted_energy_[i] = phi;
    }

    // 5. Exact near pairs in place of the mesh's (and the self term out).
    near_field_.apply(cell_list_, sorted_gradient_.data(),
                      pair_energy ? sorted_energy_.data() : nullptr);

    // Back to the particles' order.
#pragma omp parallel for schedule(static)
    for (Eigen::Index i = 0; i < n; ++i)
      for (int a = 0; a < d; ++a)
        gradient(cell_list_.particle()[i], a) = sorted_gradient_[a * n + i];
    if (pair_energy) {
      double total = 0.0;
      for (Eigen::Index i = 0; i < n; ++i) total += sorted_energy_[i];
      *pair_energy = total;
    }
  }

  std::string name() const override {
    return "mesh";
  }

 private:
  // The stencil of particle k; false when it is too close to the edge of the grid (or not finite).
  bool stencil(const Eigen::MatrixXd& x, Eigen::Index k, MeshStencil& st) const {
    st = MeshStencil{};
    for (int a = 0; a < grid_.dim(); ++a) {
      // Position in units of cells, measured from the first cell centre.
      const double u = (x(k, a) - grid_.lower()[a]) / grid_.spacing(a) - 0.5;
      const double base = std::floor(u);
      if (!(base >= kMargin - 1 && base <= grid_.cells(a) - kMargin - 1)) return false;
      st.t[a] = u - base;
      st.cell[a] = static_cast<int>(base);
      st.base += static_cast<Eigen::Index>(base) * grid_.stride(a);
    }
    return true;
  }

  // The CIC weight of sorted particle i at corner b of its stencil.
  double corner_weight(Eigen::Index i, int b) const {
    double w = 1.0;
    for (int a = 0; a < grid_.dim(); ++a) {
      const double t = cell_list_.fraction(a)[i];
      w *= (b >> a) & 1 ? t : 1.0 - t;
    }
    return w;
  }

  Grid grid_;
  FftConvolution convolution_;
  NearFieldCorrection near_field_;
  MeshCellList cell_list_;
  int corners_ = 2;
  std::array<Eigen::Index, 8> corner_offset_{};      // cell of corner b less the base cell
  std::vector<double> density_, potential_, field_;  // field: axis a at [a · M, (a + 1) · M)
  std::vector<MeshStencil> stencils_;
  std::vector<double> sorted_gradient_, sorted_energy_;
};

}  // namespace

std::unique_ptr<InteractionSum> make_particle_mesh_sum(const InteractionKernel& kernel,
                                                       const Eigen::VectorXd& lower,
                                                       const Eigen::VectorXd& upper,
                                                       const Eigen::VectorXi& cells,
                                                       int near_cells) {
  return std::make_unique<ParticleMeshSum>(kernel, lower, upper, cells, near_cells);
}

int default_near_cells(int d) {
  return d == 1 ? 3 : 2;
}

}  // namespace cpm
