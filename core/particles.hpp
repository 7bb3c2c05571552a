#pragma once
// An ensemble of N particles in R^d, stored structure-of-arrays: positions is an (N, d)
// column-major matrix, so column a holds coordinate a of every particle contiguously.
#include <Eigen/Dense>

namespace cpm {

struct Particles {
  Eigen::MatrixXd positions;  // (N, d)

  Particles() = default;
  Particles(Eigen::Index n, Eigen::Index d) : positions(Eigen::MatrixXd::Zero(n, d)) {}
  explicit Particles(Eigen::MatrixXd x) : positions(std::move(x)) {}

  Eigen::Index size() const { return positions.rows(); }
  Eigen::Index dim() const { return positions.cols(); }
};

}  // namespace cpm
