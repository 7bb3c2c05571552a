#include "parallel/slab_decomposition.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cpm {

SlabDecomposition::SlabDecomposition(double lower, double upper, long planes, int ranks)
    : lower_(lower),
      width_((upper - lower) / static_cast<double>(planes)),
      planes_(planes),
      block_(planes >= 1 && ranks >= 1 ? (planes + ranks - 1) / ranks : 1),
      ranks_(ranks) {
  if (!(lower < upper)) throw std::invalid_argument("a slab decomposition needs lower < upper");
  if (planes < 1) throw std::invalid_argument("a slab decomposition needs at least one plane");
  if (ranks < 1) throw std::invalid_argument("a slab decomposition needs at least one rank");
}

long SlabDecomposition::first_plane(int rank) const {
  return std::min(planes_, block_ * rank);
}

long SlabDecomposition::plane_count(int rank) const {
  return std::min(planes_, block_ * (rank + 1)) - first_plane(rank);
}

double SlabDecomposition::lower(int rank) const {
  return lower_ + width_ * first_plane(rank);
}

double SlabDecomposition::upper(int rank) const {
  return lower_ + width_ * (first_plane(rank) + plane_count(rank));
}

int SlabDecomposition::owner(double x0) const {
  const double plane = std::floor((x0 - lower_) / width_);
  // NaN goes to the first rank, like coordinates below the box.
  const long p = !(plane >= 0.0)                         ? 0
                 : plane >= static_cast<double>(planes_) ? planes_ - 1
                                                         : static_cast<long>(plane);
  return static_cast<int>(p / block_);
}

}  // namespace cpm
