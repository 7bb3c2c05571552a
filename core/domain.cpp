#include "core/domain.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace cpm {

namespace {
// Coordinates below which the projection runs on one thread: a team costs more than it saves.
constexpr Eigen::Index kParallelEntries = Eigen::Index{1} << 16;
}  // namespace

Domain Domain::whole_space(int dim) {
  if (dim < 1) throw std::invalid_argument("domain dimension must be at least 1");
  Domain d;
  d.kind_ = Kind::whole_space;
  d.dim_ = dim;
  const double inf = std::numeric_limits<double>::infinity();
  d.lower_ = Eigen::VectorXd::Constant(dim, -inf);
  d.upper_ = Eigen::VectorXd::Constant(dim, inf);
  d.centre_ = Eigen::VectorXd::Zero(dim);
  return d;
}

Domain Domain::ball(Eigen::VectorXd centre, double radius) {
  if (centre.size() < 1) throw std::invalid_argument("ball centre must have at least 1 coordinate");
  if (!(radius > 0.0)) throw std::invalid_argument("ball radius must be positive");
  Domain d;
  d.kind_ = Kind::ball;
  d.dim_ = static_cast<int>(centre.size());
  d.radius_ = radius;
  d.lower_ = centre.array() - radius;
  d.upper_ = centre.array() + radius;
  d.centre_ = std::move(centre);
  return d;
}

Domain Domain::box(Eigen::VectorXd lower, Eigen::VectorXd upper) {
  if (lower.size() < 1 || lower.size() != upper.size())
    throw std::invalid_argument("box corners must have the same, positive number of coordinates");
  if (!(upper.array() > lower.array()).all())
    throw std::invalid_argument(
        "box upper corner must exceed the lower corner in every coordinate");
  Domain d;
  d.kind_ = Kind::box;
  d.dim_ = static_cast<int>(lower.size());
  d.centre_ = 0.5 * (lower + upper);
  d.lower_ = std::move(lower);
  d.upper_ = std::move(upper);
  return d;
}

bool Domain::contains(const Eigen::Ref<const Eigen::VectorXd>& p) const {
  switch (kind_) {
    case Kind::whole_space:
      return true;
    case Kind::ball:
      return (p - centre_).squaredNorm() <= radius_ * radius_;
    case Kind::box:
      return (p.array() >= lower_.array()).all() && (p.array() <= upper_.array()).all();
  }
  return false;
}

void Domain::project(Eigen::Ref<Eigen::VectorXd> p) const {
  switch (kind_) {
    case Kind::whole_space:
      return;
    case Kind::ball: {
      const double r = (p - centre_).norm();
      if (r > radius_) p = centre_ + (radius_ / r) * (p - centre_);
      return;
    }
    case Kind::box:
      p = p.cwiseMax(lower_).cwiseMin(upper_);
      return;
  }
}

void Domain::project_all(Eigen::MatrixXd& x) const {
  const Eigen::Index n = x.rows();
  switch (kind_) {
    case Kind::whole_space:
      return;
    case Kind::ball: {
      const double r2max = radius_ * radius_;
#pragma omp parallel for schedule(static) if (n * dim_ > kParallelEntries)
      for (Eigen::Index k = 0; k < n; ++k) {
        double r2 = 0.0;
        for (int a = 0; a < dim_; ++a) r2 += (x(k, a) - centre_[a]) * (x(k, a) - centre_[a]);
        if (r2 > r2max) {
          const double scale = radius_ / std::sqrt(r2);
          for (int a = 0; a < dim_; ++a) x(k, a) = centre_[a] + scale * (x(k, a) - centre_[a]);
        }
      }
      return;
    }
    case Kind::box:
      for (int a = 0; a < dim_; ++a) x.col(a) = x.col(a).cwiseMax(lower_[a]).cwiseMin(upper_[a]);
      return;
  }
}

std::string Domain::describe() const {
  std::ostringstream s;
  switch (kind_) {
    case Kind::whole_space:
      s << "whole space R^" << dim_;
      break;
    case Kind::ball:
      s << "ball of radius " << radius_ << " in R^" << dim_;
      break;
    case Kind::box:
      s << "box [" << lower_.transpose() << "] x [" << upper_.transpose() << "]";
      break;
  }
  return s.str();
}

}  // namespace cpm
