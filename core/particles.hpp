#pragma once
// An ensemble of N particles in R^d, stored structure-of-arrays: positions is an (N, d)
// column-major matrix, so column a holds coordinate a of every particle contiguously. Each
// particle has an id, which keys its random streams (docs/numerics.md §3.6): row k's id is k
// unless `ids` says otherwise (a rank's share of a distributed system, docs/distributed.md §2).
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

namespace cpm {

struct Particles {
  Eigen::MatrixXd positions;       // (N, d)
  std::vector<std::uint64_t> ids;  // empty, or one id per row

  Particles() = default;
  Particles(Eigen::Index n, Eigen::Index d) : positions(Eigen::MatrixXd::Zero(n, d)) {}
  explicit Particles(Eigen::MatrixXd x) : positions(std::move(x)) {}

  Eigen::Index size() const { return positions.rows(); }
  Eigen::Index dim() const { return positions.cols(); }
  std::uint64_t id(Eigen::Index k) const {
    return ids.empty() ? static_cast<std::uint64_t>(k) : ids[static_cast<std::size_t>(k)];
  }
};

}  // namespace cpm
