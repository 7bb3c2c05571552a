#pragma once
// Reproducible Gaussian test matrices: entries N(0, scale²), filled column by column.
#include <Eigen/Dense>
#include <random>

namespace cpm::testing_support {

inline Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, double scale,
                                     unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = normal(rng);
  return m;
}

}  // namespace cpm::testing_support
