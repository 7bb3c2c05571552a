#include "io/cell_grid.hpp"

#include <cmath>
#include <stdexcept>

namespace cpm {

void CellGrid::validate(const std::string& what) const {
  if (dim < 1 || dim > 3) throw std::invalid_argument(what + ": grid dimension must be 1, 2 or 3");
  for (int a = 0; a < 3; ++a) {
    const bool used = a < dim;
    if (used && cells[a] < 1)
      throw std::invalid_argument(what + ": grid needs at least one cell per axis");
    if (!used && cells[a] != 1)
      throw std::invalid_argument(what + ": unused grid axes must hold one cell");
    if (!(std::isfinite(spacing[a]) && spacing[a] > 0.0) || !std::isfinite(origin[a]))
      throw std::invalid_argument(what + ": grid spacing must be positive and the origin finite");
  }
}

}  // namespace cpm
