#pragma once
// The point sets on which `cpm features` compares Gram matrices (docs/features.md §4), in d
// dimensions, scaled so that the mean of σ²|x − y|²/2 over pairs is scale² whatever d:
//   gaussian       x ~ N(0, τ² I_d), τ = scale/(σ√d) (that mean in expectation);
//   fashion_mnist  the Fashion-MNIST test images, every pixel z-scored, projected to d
//                  dimensions by a Gaussian matrix and rescaled to that mean exactly.
// The evaluation points and the selection points (which choose the coulomb setting) are disjoint:
// other draws of the Gaussian, other images.
#include <Eigen/Dense>

#include "config/features_config.hpp"

namespace cpm {

class ApproximationPoints {
 public:
  // Reads the images once (fashion_mnist); InputError naming the file when it cannot.
  explicit ApproximationPoints(const FeaturesStudyConfig& config);

  // (points.count, d) evaluation points, or (points.selection_count, d) selection points.
  Eigen::MatrixXd points(int d, bool selection) const;

 private:
  Eigen::MatrixXd gaussian_points(int d, bool selection) const;
  Eigen::MatrixXd projected_images(int d, bool selection) const;

  FeaturesStudyConfig config_;
  Eigen::MatrixXd images_;  // fashion_mnist: the chosen rows, z-scored; evaluation rows first
};

}  // namespace cpm
