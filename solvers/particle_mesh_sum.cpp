#include "solvers/particle_mesh_sum.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "solvers/fft_convolution.hpp"
#include "solvers/grid.hpp"

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

// Cloud-in-cell stencil of one particle: the cell `base` holds the corner with all bits 0;
// corner b (bit a set: +1 along axis a) has weight Π_a (b_a ? t_a : 1 − t_a).
struct Stencil {
  Eigen::Index base;
  std::array<double, 3> t{};
  double weight(int corner, int d) const {
    double w = 1.0;
    for (int a = 0; a < d; ++a) w *= (corner >> a) & 1 ? t[a] : 1.0 - t[a];
    return w;
  }
};

class ParticleMeshSum final : public InteractionSum {
 public:
  ParticleMeshSum(const InteractionKernel& kernel, const Eigen::VectorXd& lower,
                  const Eigen::VectorXd& upper, const Eigen::VectorXi& cells)
      : grid_(padded_grid(lower, upper, cells)),
        convolution_(grid_, kernel),
        density_(static_cast<std::size_t>(grid_.size())),
        potential_(density_.size()),
        field_(density_.size() * static_cast<std::size_t>(grid_.dim())) {
    const int d = grid_.dim();
    corners_ = 1 << d;
    local_cells_ = pow_int(4, d);
    // K_m / h^d for |m_a| ≤ 2: the potential of one cell's unit mass at nearby cell centres.
    int m[3] = {0, 0, 0};
    for (int i = 0; i < pow_int(5, d); ++i) {
      for (int a = 0, rest = i; a < d; ++a, rest /= 5) m[a] = rest % 5 - 2;
      near_kernel_[i] = convolution_.weights()(m) / grid_.cell_volume();
    }
    // Local cells o ∈ {−1, 0, 1, 2}^d around a stencil (index Σ_a (o_a + 1) 4^a), and for each
    // local cell and corner b the entry of near_kernel_ at offset o − b.
    for (int i = 0; i < local_cells_; ++i)
      for (int b = 0; b < corners_; ++b) {
        int index = 0;
        for (int a = 0, rest = i, p5 = 1; a < d; ++a, rest /= 4, p5 *= 5)
          index += ((rest % 4 - 1) - ((b >> a) & 1) + 2) * p5;
        offset_kernel_[i * corners_ + b] = index;
      }
    for (int b = 0; b < corners_; ++b)
      for (int a = 0, p4 = 1; a < d; ++a, p4 *= 4) corner_local_[b] += (((b >> a) & 1) + 1) * p4;
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

    // 1. Deposit, in particle order (so the sums do not depend on the thread count).
    std::fill(density_.begin(), density_.end(), 0.0);
    const double inverse_volume = 1.0 / grid_.cell_volume();
    for (Eigen::Index k = 0; k < n; ++k)
      for (int b = 0; b < corners_; ++b)
        density_[corner_cell(stencils_[k], b)] += stencils_[k].weight(b, d) * inverse_volume;

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

    // 4–5. Interpolate back and remove the particle's own share.
    if (energy_.size() != static_cast<std::size_t>(n)) energy_.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (Eigen::Index k = 0; k < n; ++k) {
      const Stencil& st = stencils_[k];
      const SelfTerms self = self_terms(st);
      std::array<double, 3> mesh_gradient{};
      double phi = 0.0;
      for (int b = 0; b < corners_; ++b) {
        const double w = st.weight(b, d);
        const Eigen::Index c = corner_cell(st, b);
        phi += w * potential_[c];
        for (int a = 0; a < d; ++a) mesh_gradient[a] += w * field_[a * cells + c];
      }
      for (int a = 0; a < d; ++a) gradient(k, a) = mesh_gradient[a] - self.gradient[a];
      energy_[k] = phi - self.energy;
    }
    if (pair_energy) {
      double total = 0.0;
      for (Eigen::Index k = 0; k < n; ++k) total += energy_[k];
      *pair_energy = total;
    }
  }

  std::string name() const override {
    return "mesh";
  }

 private:
  static int pow_int(int base, int e) {
    return e == 0 ? 1 : base * pow_int(base, e - 1);
  }

  // The stencil of particle k; false when it is too close to the edge of the grid (or not finite).
  bool stencil(const Eigen::MatrixXd& x, Eigen::Index k, Stencil& st) const {
    st = Stencil{0};
    for (int a = 0; a < grid_.dim(); ++a) {
      // Position in units of cells, measured from the first cell centre.
      const double u = (x(k, a) - grid_.lower()[a]) / grid_.spacing(a) - 0.5;
      const double base = std::floor(u);
      if (!(base >= kMargin - 1 && base <= grid_.cells(a) - kMargin - 1)) return false;
      st.t[a] = u - base;
      st.base += static_cast<Eigen::Index>(base) * grid_.stride(a);
    }
    return true;
  }

  Eigen::Index corner_cell(const Stencil& st, int corner) const {
    Eigen::Index c = st.base;
    for (int a = 0; a < grid_.dim(); ++a)
      if ((corner >> a) & 1) c += grid_.stride(a);
    return c;
  }

  struct SelfTerms {
    std::array<double, 3> gradient{};  // Σ_c w_c ∂_a φ_self(c)
    double energy = 0.0;               // Σ_c w_c φ_self(c)
  };

  // The particle's own deposit carried through steps 2–4: φ_self on the cells base + {−1..2}^d
  // (offsets from its corners up to 2), then the same differences and weights as for φ.
  SelfTerms self_terms(const Stencil& st) const {
    const int d = grid_.dim();
    std::array<double, 8> w{};
    for (int b = 0; b < corners_; ++b) w[b] = st.weight(b, d);
    std::array<double, 64> phi{};
    for (int i = 0; i < local_cells_; ++i) {
      double sum = 0.0;
      for (int b = 0; b < corners_; ++b)
        sum += near_kernel_[offset_kernel_[i * corners_ + b]] * w[b];
      phi[i] = sum;
    }
    SelfTerms self;
    for (int b = 0; b < corners_; ++b) {
      const int i = corner_local_[b];
      self.energy += w[b] * phi[i];
      for (int a = 0, p4 = 1; a < d; ++a, p4 *= 4)
        self.gradient[a] += w[b] * (phi[i + p4] - phi[i - p4]) / (2.0 * grid_.spacing(a));
    }
    return self;
  }

  Grid grid_;
  FftConvolution convolution_;
  int corners_ = 2, local_cells_ = 4;
  std::array<double, 125> near_kernel_{};  // K_m / h^d, index Σ_a (m_a + 2) 5^a
  std::array<int, 64 * 8> offset_kernel_{};
  std::array<int, 8> corner_local_{};
  std::vector<double> density_, potential_, field_;  // field: axis a at [a · M, (a + 1) · M)
  std::vector<Stencil> stencils_;
  std::vector<double> energy_;
};

}  // namespace

std::unique_ptr<InteractionSum> make_particle_mesh_sum(const InteractionKernel& kernel,
                                                       const Eigen::VectorXd& lower,
                                                       const Eigen::VectorXd& upper,
                                                       const Eigen::VectorXi& cells) {
  return std::make_unique<ParticleMeshSum>(kernel, lower, upper, cells);
}

}  // namespace cpm
