#pragma once
// A uniform Cartesian grid of cells described by plain numbers: the form in which grid fields
// are written (HDF5, VTK) and read back. Cell (i, j, k) covers
//     [origin + (i, j, k) ∘ spacing,  origin + (i + 1, j + 1, k + 1) ∘ spacing].
// A field on the grid is a flat array of cell values running x fastest,
//     index = i + nx (j + ny k),
// which is VTK's order and Eigen's column-major order of an (nx, ny) matrix.
#include <Eigen/Dense>
#include <array>
#include <string>

namespace cpm {

struct CellGrid {
  int dim = 1;                                  // 1, 2 or 3
  std::array<Eigen::Index, 3> cells{1, 1, 1};   // unused axes hold 1
  std::array<double, 3> origin{0.0, 0.0, 0.0};  // unused axes hold 0
  std::array<double, 3> spacing{1.0, 1.0, 1.0};

  Eigen::Index size() const { return cells[0] * cells[1] * cells[2]; }
  // Throws std::invalid_argument naming `what` if the grid is not a valid 1D–3D cell grid.
  void validate(const std::string& what) const;
  bool operator==(const CellGrid&) const = default;
};

}  // namespace cpm
