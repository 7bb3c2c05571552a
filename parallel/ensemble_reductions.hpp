#pragma once
// The observables of core/observables.hpp for a system spread over ranks: each rank passes its
// rows and every rank receives the value of all rows together (partial sums added over ranks, so
// equal to one process's value to rounding). On one process they are core/observables.hpp's,
// bit for bit.
#include <Eigen/Dense>

#include "parallel/rank_group.hpp"

namespace cpm {

Eigen::VectorXd ensemble_mean(const Eigen::MatrixXd& x, const RankGroup& ranks);
// Covariance about `mean` (the ensemble mean), normalised by N.
Eigen::MatrixXd ensemble_covariance(const Eigen::MatrixXd& x, const Eigen::VectorXd& mean,
                                    const RankGroup& ranks);
double radial_extent(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre,
                     const RankGroup& ranks);

}  // namespace cpm
