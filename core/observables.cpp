#include "core/observables.hpp"

namespace cpm {

Eigen::VectorXd ensemble_mean(const Eigen::MatrixXd& x) {
  return x.colwise().mean().transpose();
}

Eigen::MatrixXd ensemble_covariance(const Eigen::MatrixXd& x) {
  const Eigen::MatrixXd centred = x.rowwise() - x.colwise().mean();
  return (centred.transpose() * centred) / static_cast<double>(x.rows());
}

Eigen::VectorXd radii(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre) {
  return (x.rowwise() - centre.transpose()).rowwise().norm();
}

double radial_extent(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre) {
  return x.rows() ? radii(x, centre).maxCoeff() : 0.0;
}

}  // namespace cpm
