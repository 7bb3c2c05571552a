#include "parallel/ensemble_reductions.hpp"

#include "core/observables.hpp"

namespace cpm {

Eigen::VectorXd ensemble_mean(const Eigen::MatrixXd& x, const RankGroup& ranks) {
  if (!ranks.spread()) return ensemble_mean(x);
  Eigen::VectorXd sum = x.colwise().sum().transpose();
  ranks.sum(sum.data(), static_cast<int>(sum.size()));
  return sum / ranks.sum(static_cast<double>(x.rows()));
}

Eigen::MatrixXd ensemble_covariance(const Eigen::MatrixXd& x, const Eigen::VectorXd& mean,
                                    const RankGroup& ranks) {
  if (!ranks.spread()) return ensemble_covariance(x);
  const Eigen::MatrixXd centred = x.rowwise() - mean.transpose();
  Eigen::MatrixXd moment = centred.transpose() * centred;
  ranks.sum(moment.data(), static_cast<int>(moment.size()));
  return moment / ranks.sum(static_cast<double>(x.rows()));
}

double radial_extent(const Eigen::MatrixXd& x, const Eigen::VectorXd& centre,
                     const RankGroup& ranks) {
  return ranks.max(radial_extent(x, centre));
}

}  // namespace cpm
