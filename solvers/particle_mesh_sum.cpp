#include "solvers/particle_mesh_sum.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/grid.hpp"
#include "solvers/fft_convolution.hpp"
#include "solvers/particle_mesh_cell_list.hpp"
#include "solvers/particle_mesh_interpolation.hpp"
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

class ParticleMeshSum final : public InteractionSum {
 public:
  ParticleMeshSum(const InteractionKernel& kernel, const Eigen::VectorXd& lower,
                  const Eigen::VectorXd& upper, const Eigen::VectorXi& cells, int near_cells)
      : mesh_(particle_mesh_grid(lower, upper, cells)),
        convolution_(mesh_.grid(), kernel),
        near_field_(kernel, convolution_.weights(), mesh_.grid().cells(), near_cells),
        cell_list_(mesh_.grid().size(), mesh_.grid().dim()),
        density_(static_cast<std::size_t>(mesh_.grid().size())),
        potential_(density_.size()),
        field_(density_.size() * static_cast<std::size_t>(mesh_.grid().dim())) {}

  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override {
    const Grid& grid = mesh_.grid();
    const int d = grid.dim();
    if (x.cols() != d) throw std::invalid_argument("particle-mesh sum: wrong particle dimension");
    const Eigen::Index n = x.rows();
    stencils_.resize(static_cast<std::size_t>(n));
    bool inside = true;
#pragma omp parallel for schedule(static) reduction(&& : inside)
    for (Eigen::Index k = 0; k < n; ++k) inside = mesh_.stencil(x, k, stencils_[k]) && inside;
    if (!inside) throw std::out_of_range("particle-mesh sum: a particle left the box of the mesh");
    cell_list_.build(x, stencils_);

    // 1. Deposit; 2. φ = K ∗ ρ; 3. centred differences (meaningless in the first and last cell of
    //    a grid line, which no stencil reads); 4. interpolate back, in the list's order.
    mesh_.deposit(cell_list_, density_.data(), 0, grid.size());
    convolution_.convolve(density_.data(), potential_.data());
    const Eigen::Index widest = grid.stride(d - 1);
    mesh_.differences(potential_.data(), field_.data(), widest, grid.size() - widest);
    if (sorted_energy_.size() < static_cast<std::size_t>(n)) {
      sorted_energy_.resize(static_cast<std::size_t>(n));
      sorted_gradient_.resize(static_cast<std::size_t>(n * d));
    }
    mesh_.interpolate(cell_list_, potential_.data(), field_.data(), sorted_gradient_.data(),
                      sorted_energy_.data());

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
  MeshInterpolation mesh_;
  FftConvolution convolution_;
  NearFieldCorrection near_field_;
  MeshCellList cell_list_;
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
