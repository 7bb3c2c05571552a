#pragma once
// Metrics of probabilistic predictions (docs/model.md §2): accuracy, log loss, Brier score and the
// expected calibration error.
#include <Eigen/Dense>

namespace cpm {

struct ClassificationMetrics {
  double accuracy = 0.0;
  double log_loss = 0.0;  // mean −log p(y_i), probabilities clipped at 1e−15
  // Two classes: mean (p(1) − [y = 1])²; C > 2: mean Σ_c (p(c) − [y = c])² (Brier, 1950).
  double brier = 0.0;
  // Σ_b (n_b / n) |accuracy_b − confidence_b| over equal-width bins of the confidence max_c p(c).
  double ece = 0.0;
};

// probabilities (n, C), rows summing to one; labels in 0..C−1.
ClassificationMetrics classification_metrics(const Eigen::MatrixXd& probabilities,
                                             const Eigen::VectorXi& labels, int bins = 15);

}  // namespace cpm
