#pragma once
// The constraints of the domain D that hold particles on its wall (docs/numerics.md §3.9), for the
// Newton minimiser, FIRE and the implicit integrators.
#include <Eigen/Dense>
#include <vector>

#include "core/domain.hpp"

namespace cpm {

// The constraints of D active at a configuration, and the projection of motions onto the allowed
// ones (zero normal component on a ball's sphere, zero coordinate at a box face).
class ActiveConstraints {
 public:
  explicit ActiveConstraints(Domain domain) : domain_(std::move(domain)) {}

  // A particle (ball) or coordinate (box) is active when it lies on ∂D (to 1e-10 of the size of D)
  // and the motion −gradient points out of D.
  void update(const Eigen::MatrixXd& x, const Eigen::MatrixXd& gradient);
  // Removes the forbidden components of v, in place.
  void restrict(Eigen::MatrixXd& v) const;
  // The number of active particles (ball) or coordinates (box).
  Eigen::Index count() const { return count_; }
  const Domain& domain() const { return domain_; }
  // Whether particle k is held on the wall (box: in at least one coordinate).
  bool active(Eigen::Index k) const { return !active_.empty() && active_[k]; }
  // Ball: the unit outward normal n_k of particle k.
  const Eigen::MatrixXd& normals() const { return normals_; }
  // Box: whether coordinate a of particle k is held.
  bool held(Eigen::Index k, Eigen::Index a) const { return held_(k, a) != 0; }
  // The d × d orthogonal projection onto particle k's allowed motions: I − n_k n_kᵀ on a ball's
  // wall, the free coordinates at a box face, I when k is free.
  Eigen::MatrixXd allowed(Eigen::Index k, Eigen::Index d) const;
  // The wall's curvature term μ_k/R of particle k on a ball's wall (zero otherwise).
  double curvature(Eigen::Index k) const {
    return domain_.kind() == Domain::Kind::ball && active(k) ? pressure_[k] / domain_.radius()
                                                             : 0.0;
  }

 private:
  Domain domain_;
  Eigen::Index count_ = 0;
  std::vector<char> active_;                                  // per particle
  Eigen::MatrixXd normals_;                                   // ball: rows n_k of active particles
  Eigen::VectorXd pressure_;                                  // ball: μ_k
  Eigen::Matrix<char, Eigen::Dynamic, Eigen::Dynamic> held_;  // box
};

}  // namespace cpm
