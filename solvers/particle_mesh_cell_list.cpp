#include "solvers/particle_mesh_cell_list.hpp"

#include <algorithm>

namespace cpm {

MeshCellList::MeshCellList(Eigen::Index cells, int d)
    : d_(d),
      start_(static_cast<std::size_t>(cells) + 1),
      corner_mass_(static_cast<std::size_t>(cells) << d) {}

void MeshCellList::build(const Eigen::Ref<const Eigen::MatrixXd>& x,
                         const std::vector<MeshStencil>& stencils) {
  n_ = x.rows();
  if (n_ > capacity_) {
    capacity_ = n_;
    stride_ = capacity_ + kPadding;
    position_.assign(static_cast<std::size_t>(stride_ * d_), 0.0);
    fraction_.resize(static_cast<std::size_t>(capacity_ * d_));
    base_.resize(static_cast<std::size_t>(capacity_));
    particle_.resize(base_.size());
    cell0_.resize(base_.size());
  }
  // Counting sort, serial: start_[c + 1] counts cell c, the prefix sum turns the counts into
  // starts, and placing the particles advances start_[c] to the end of cell c, i.e. to the
  // start of cell c + 1; shifting back by one restores the starts. Only the particle numbers
  // are scattered; the rest is gathered in sorted order, in parallel.
  std::fill(start_.begin(), start_.end(), 0);
  for (Eigen::Index k = 0; k < n_; ++k) ++start_[static_cast<std::size_t>(stencils[k].base) + 1];
  for (std::size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
  for (Eigen::Index k = 0; k < n_; ++k)
    particle_[start_[static_cast<std::size_t>(stencils[k].base)]++] = k;
  for (std::size_t c = start_.size() - 1; c > 0; --c) start_[c] = start_[c - 1];
  start_[0] = 0;
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < n_; ++i) {
    const Eigen::Index k = particle_[i];
    const MeshStencil& st = stencils[k];
    base_[i] = st.base;
    cell0_[i] = st.cell[0];
    for (int a = 0; a < d_; ++a) {
      position_[a * stride_ + i] = x(k, a);
      fraction_[a * capacity_ + i] = st.t[a];
    }
  }
  const int corners = 1 << d_;
  const Eigen::Index cells = static_cast<Eigen::Index>(start_.size()) - 1;
#pragma omp parallel for schedule(static)
  for (Eigen::Index c = 0; c < cells; ++c) {
    double* mass = corner_mass_.data() + c * corners;
    std::fill_n(mass, corners, 0.0);
    for (Eigen::Index i = start_[c]; i < start_[c + 1]; ++i)
      for (int b = 0; b < corners; ++b) {
        double w = 1.0;
        for (int a = 0; a < d_; ++a) {
          const double t = fraction_[a * capacity_ + i];
          w *= (b >> a) & 1 ? t : 1.0 - t;
        }
        mass[b] += w;
      }
  }
}

}  // namespace cpm
