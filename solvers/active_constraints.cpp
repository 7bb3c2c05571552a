#include "solvers/active_constraints.hpp"

namespace cpm {

namespace {

// A point of ∂D within this fraction of D's size counts as on the wall.
constexpr double kWallTolerance = 1e-10;

}  // namespace

void ActiveConstraints::update(const Eigen::MatrixXd& x, const Eigen::MatrixXd& gradient) {
  const Eigen::Index n = x.rows(), d = x.cols();
  count_ = 0;
  switch (domain_.kind()) {
    case Domain::Kind::whole_space:
      return;
    case Domain::Kind::ball: {
      active_.assign(n, 0);
      normals_.setZero(n, d);
      pressure_.setZero(n);
      const double r_wall = domain_.radius() * (1.0 - kWallTolerance);
      for (Eigen::Index k = 0; k < n; ++k) {
        const Eigen::RowVectorXd offset = x.row(k) - domain_.centre().transpose();
        const double r = offset.norm();
        if (r < r_wall) continue;
        const Eigen::RowVectorXd normal = offset / r;
        const double push = -gradient.row(k).dot(normal);  // outward component of −G
        if (push <= 0.0) continue;
        active_[k] = 1;
        normals_.row(k) = normal;
        pressure_[k] = push;
        ++count_;
      }
      return;
    }
    case Domain::Kind::box: {
      held_.setZero(n, d);
      active_.assign(n, 0);
      for (Eigen::Index a = 0; a < d; ++a) {
        const double lo = domain_.lower()[a], hi = domain_.upper()[a];
        const double tol = kWallTolerance * (hi - lo);
        for (Eigen::Index k = 0; k < n; ++k) {
          const bool at_low = x(k, a) <= lo + tol && gradient(k, a) > 0.0;
          const bool at_high = x(k, a) >= hi - tol && gradient(k, a) < 0.0;
          if (at_low || at_high) {
            held_(k, a) = 1;
            active_[k] = 1;
            ++count_;
          }
        }
      }
      return;
    }
  }
}

void ActiveConstraints::restrict(Eigen::MatrixXd& v) const {
  if (count_ == 0) return;
  const Eigen::Index n = v.rows();
  if (domain_.kind() == Domain::Kind::ball) {
    for (Eigen::Index k = 0; k < n; ++k)
      if (active_[k]) v.row(k) -= v.row(k).dot(normals_.row(k)) * normals_.row(k);
  } else if (domain_.kind() == Domain::Kind::box) {
    for (Eigen::Index a = 0; a < v.cols(); ++a)
      for (Eigen::Index k = 0; k < n; ++k)
        if (held_(k, a)) v(k, a) = 0.0;
  }
}

Eigen::MatrixXd ActiveConstraints::allowed(Eigen::Index k, Eigen::Index d) const {
  Eigen::MatrixXd p = Eigen::MatrixXd::Identity(d, d);
  if (!active(k)) return p;
  if (domain_.kind() == Domain::Kind::ball) {
    p -= normals_.row(k).transpose() * normals_.row(k);
  } else {
    for (Eigen::Index a = 0; a < d; ++a)
      if (held(k, a)) p(a, a) = 0.0;
  }
  return p;
}

}  // namespace cpm
