#pragma once
// A uniform Cartesian grid of cells over a box in R^d (d = 1, 2, 3), the mesh of the
// McKean–Vlasov solver. Cell i = (i_0, …, i_{d−1}) covers lower + [i, i + 1) ∘ h. Fields on the
// grid are flat arrays of cell values running axis 0 fastest,
//     index = i_0 + n_0 (i_1 + n_1 i_2),
// (VTK's order, and Eigen's column-major order of an (n_0, n_1) matrix).
// A cell is *active* when its centre lies in the domain D; inactive (masked) cells carry no mass
// and no flux crosses their faces.
#include <Eigen/Dense>
#include <vector>

#include "core/domain.hpp"

namespace cpm {

class Grid {
 public:
  // Cells over the box [lower, upper] with cells[a] cells along axis a; masked by `domain`.
  Grid(const Domain& domain, Eigen::VectorXd lower, Eigen::VectorXd upper, Eigen::VectorXi cells);
  // Cells over D's bounding box (D must be bounded).
  static Grid over_domain(const Domain& domain, const Eigen::VectorXi& cells);
  // The planes [first, first + count) along the last axis, with their cells' masks and the same
  // spacing: a rank's slab of a grid spread over ranks.
  Grid slab(long first, long count) const;

  int dim() const { return static_cast<int>(cells_.size()); }
  Eigen::Index size() const { return size_; }  // number of cells M, active or not
  const Eigen::VectorXi& cells() const { return cells_; }
  int cells(int axis) const { return cells_[axis]; }
  Eigen::Index stride(int axis) const { return strides_[axis]; }
  const Eigen::VectorXd& lower() const { return lower_; }
  const Eigen::VectorXd& upper() const { return upper_; }
  const Eigen::VectorXd& spacing() const { return spacing_; }
  double spacing(int axis) const { return spacing_[axis]; }
  double cell_volume() const { return cell_volume_; }

  int coordinate(Eigen::Index cell, int axis) const {
    return static_cast<int>((cell / strides_[axis]) % cells_[axis]);
  }
  Eigen::Index index(const Eigen::Ref<const Eigen::VectorXi>& multi_index) const;
  double centre(Eigen::Index cell, int axis) const {
    return lower_[axis] + (coordinate(cell, axis) + 0.5) * spacing_[axis];
  }
  Eigen::VectorXd centre(Eigen::Index cell) const;
  // (M, d) matrix of all cell centres.
  Eigen::MatrixXd centres() const;
  // The cell holding `point` (d coordinates; the upper faces belong to the last cell), or −1
  // when the point lies outside the box.
  Eigen::Index locate(const double* point) const;

  bool active(Eigen::Index cell) const { return active_[cell] != 0; }
  const std::vector<unsigned char>& active_mask() const { return active_; }
  Eigen::Index active_count() const { return active_count_; }

 private:
  Eigen::VectorXd lower_, upper_, spacing_;
  Eigen::VectorXi cells_;
  Eigen::Matrix<Eigen::Index, Eigen::Dynamic, 1> strides_;
  Eigen::Index size_ = 0, active_count_ = 0;
  double cell_volume_ = 0.0;
  std::vector<unsigned char> active_;
};

}  // namespace cpm
