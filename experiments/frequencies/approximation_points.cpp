#include "experiments/frequencies/approximation_points.hpp"

#include <cmath>
#include <vector>

#include "core/random_stream.hpp"
#include "io/idx_reader.hpp"
#include "io/input_error.hpp"

namespace cpm {

ApproximationPoints::ApproximationPoints(const FeaturesStudyConfig& config) : config_(config) {
  if (config_.point_source != "fashion_mnist") return;
  const std::string path = config_.image_directory + "/t10k-images-idx3-ubyte.gz";
  const Eigen::MatrixXd all = idx_rows(read_idx(path), path);
  const Eigen::Index wanted = config_.points + config_.selection_points;
  if (all.rows() < wanted)
    throw InputError(path + ": holds " + std::to_string(all.rows()) + " images, " +
                     std::to_string(wanted) + " wanted (points.count + points.selection_count)");
  // A random subset of the images, the evaluation rows first; every pixel z-scored over it
  // (constant pixels stay 0).
  std::vector<std::size_t> order(static_cast<std::size_t>(all.rows()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  RandomStream stream(config_.seed, RandomPurpose::data_projection, 0, 0);
  shuffle_prefix(order, static_cast<std::size_t>(wanted), stream);
  images_.resize(wanted, all.cols());
  for (Eigen::Index i = 0; i < wanted; ++i)
    images_.row(i) = all.row(static_cast<Eigen::Index>(order[static_cast<std::size_t>(i)]));
  const Eigen::RowVectorXd mean = images_.colwise().mean();
  images_.rowwise() -= mean;
  const Eigen::RowVectorXd deviation =
      (images_.colwise().squaredNorm() / static_cast<double>(wanted)).cwiseSqrt();
  for (Eigen::Index a = 0; a < images_.cols(); ++a)
    if (deviation[a] > 0.0) images_.col(a) /= deviation[a];
}

Eigen::MatrixXd ApproximationPoints::points(int d, bool selection) const {
  return config_.point_source == "fashion_mnist" ? projected_images(d, selection)
                                                 : gaussian_points(d, selection);
}

Eigen::MatrixXd ApproximationPoints::gaussian_points(int d, bool selection) const {
  const Eigen::Index count = selection ? config_.selection_points : config_.points;
  const double tau = config_.point_scale / (config_.sigma * std::sqrt(static_cast<double>(d)));
  Eigen::MatrixXd x(count, d);
  for (Eigen::Index i = 0; i < count; ++i) {
    // Replica 0 / 1 of the synthetic-data streams: the evaluation / selection rows.
    RandomStream s(config_.seed, RandomPurpose::synthetic_data, selection ? 1 : 0,
                   static_cast<std::uint64_t>(i) + (static_cast<std::uint64_t>(d) << 32));
    for (int a = 0; a < d; ++a) x(i, a) = tau * s.normal();
  }
  return x;
}

Eigen::MatrixXd ApproximationPoints::projected_images(int d, bool selection) const {
  // One Gaussian projection per d (column a from its own stream), applied to every chosen image.
  Eigen::MatrixXd projection(images_.cols(), d);
  for (int a = 0; a < d; ++a) {
    RandomStream s(config_.seed, RandomPurpose::data_projection, 0,
                   (static_cast<std::uint64_t>(d) << 32) + 1 + static_cast<std::uint64_t>(a));
    for (Eigen::Index p = 0; p < images_.cols(); ++p) projection(p, a) = s.normal();
  }
  Eigen::MatrixXd x = images_ * projection;
  // The mean of |x − y|² over all ordered pairs of chosen rows is 2 Σ_i |x_i − x̄|² / n.
  const Eigen::RowVectorXd centre = x.colwise().mean();
  const double mean_square =
      2.0 * (x.rowwise() - centre).squaredNorm() / static_cast<double>(x.rows());
  x *= config_.point_scale / (config_.sigma * std::sqrt(0.5 * mean_square));
  return selection ? Eigen::MatrixXd(x.bottomRows(config_.selection_points))
                   : Eigen::MatrixXd(x.topRows(config_.points));
}

}  // namespace cpm
