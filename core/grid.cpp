#include "core/grid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cpm {

Grid::Grid(const Domain& domain, Eigen::VectorXd lower, Eigen::VectorXd upper,
           Eigen::VectorXi cells)
    : lower_(std::move(lower)), upper_(std::move(upper)), cells_(std::move(cells)) {
  const int d = static_cast<int>(cells_.size());
  if (d < 1 || d > 3) throw std::invalid_argument("grid dimension must be 1, 2 or 3");
  if (lower_.size() != d || upper_.size() != d || domain.dim() != d)
    throw std::invalid_argument("grid box, cell counts and domain must have the same dimension");
  if (!lower_.allFinite() || !upper_.allFinite() || !(upper_.array() > lower_.array()).all())
    throw std::invalid_argument("grid box must be finite with upper > lower on every axis");
  if ((cells_.array() < 1).any())
    throw std::invalid_argument("grid needs at least one cell per axis");
  spacing_ = (upper_ - lower_).array() / cells_.cast<double>().array();
  cell_volume_ = spacing_.prod();
  strides_.resize(d);
  size_ = 1;
  for (int a = 0; a < d; ++a) {
    strides_[a] = size_;
    size_ *= cells_[a];
  }
  active_.assign(static_cast<std::size_t>(size_), 0);
  Eigen::VectorXd x(d);
  for (Eigen::Index c = 0; c < size_; ++c) {
    for (int a = 0; a < d; ++a) x[a] = centre(c, a);
    active_[c] = domain.contains(x) ? 1 : 0;
    active_count_ += active_[c];
  }
}

Grid Grid::over_domain(const Domain& domain, const Eigen::VectorXi& cells) {
  if (!domain.lower().allFinite() || !domain.upper().allFinite())
    throw std::invalid_argument("a grid over an unbounded domain needs an explicit box");
  return Grid(domain, domain.lower(), domain.upper(), cells);
}

Eigen::Index Grid::index(const Eigen::Ref<const Eigen::VectorXi>& i) const {
  Eigen::Index c = 0;
  for (int a = 0; a < dim(); ++a) c += strides_[a] * i[a];
  return c;
}

Eigen::VectorXd Grid::centre(Eigen::Index cell) const {
  Eigen::VectorXd x(dim());
  for (int a = 0; a < dim(); ++a) x[a] = centre(cell, a);
  return x;
}

Eigen::MatrixXd Grid::centres() const {
  Eigen::MatrixXd x(size_, dim());
  for (int a = 0; a < dim(); ++a)
    for (Eigen::Index c = 0; c < size_; ++c) x(c, a) = centre(c, a);
  return x;
}

Eigen::Index Grid::locate(const double* point) const {
  Eigen::Index c = 0;
  for (int a = 0; a < dim(); ++a) {
    const double u = (point[a] - lower_[a]) / spacing_[a];
    if (!(u >= 0.0) || point[a] > upper_[a]) return -1;
    const int i = std::min(static_cast<int>(u), cells_[a] - 1);
    c += strides_[a] * i;
  }
  return c;
}

Grid Grid::slab(long first, long count) const {
  const int s = dim() - 1;
  Grid part = *this;
  part.lower_[s] = lower_[s] + static_cast<double>(first) * spacing_[s];
  part.upper_[s] = part.lower_[s] + static_cast<double>(count) * spacing_[s];
  part.cells_[s] = static_cast<int>(count);
  part.size_ = count * strides_[s];
  part.active_.assign(active_.begin() + first * strides_[s],
                      active_.begin() + (first + count) * strides_[s]);
  part.active_count_ = 0;
  for (const unsigned char a : part.active_) part.active_count_ += a != 0;
  return part;
}

}  // namespace cpm
