#pragma once
// Observables of an ensemble computed on the fly: mean, covariance, radial extent.
#include <Eigen/Dense>

namespace cpm {

Eigen::VectorXd ensemble_mean(const Eigen::MatrixXd& x);
// Covariance about the ensemble mean, normalised by N (the empirical measure's covariance).
Eigen::MatrixXd ensemble_covariance(const Eigen::MatrixXd& x);
// max_k |x_k − centre|.
double radial_extent(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre);
// |x_k − centre| for every particle.
Eigen::VectorXd radii(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre);

}  // namespace cpm
