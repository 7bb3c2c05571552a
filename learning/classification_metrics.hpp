#pragma once
// Metrics of probabilistic predictions (docs/model.md §2): accuracy, Matthews correlation, log
// loss, Brier score and the expected calibration error.
#include <Eigen/Dense>

namespace cpm {

struct ClassificationMetrics {
  double accuracy = 0.0;
  double log_loss = 0.0;  // mean −log p(y_i), probabilities clipped at 1e−15
  // Two classes: mean (p(1) − [y = 1])²; C > 2: mean Σ_c (p(c) − [y = c])² (Brier, 1950).
  double brier = 0.0;
  // Σ_b (n_b / n) |accuracy_b − confidence_b| over equal-width bins of the confidence max_c p(c).
  double ece = 0.0;
  double mcc = 0.0;  // matthews_correlation of the most probable classes
};

// Matthews correlation; for C > 2 classes Gorodkin's R_K, which reduces to MCC for two:
//   (c·s − Σ_k p_k t_k) / √((s² − Σ p_k²)(s² − Σ t_k²)),  0 when a factor vanishes.
double matthews_correlation(const Eigen::VectorXi& labels, const Eigen::VectorXi& predictions,
                            int classes);

// probabilities (n, C), rows summing to one; labels in 0..C−1.
ClassificationMetrics classification_metrics(const Eigen::MatrixXd& probabilities,
                                             const Eigen::VectorXi& labels, int bins = 15);

}  // namespace cpm
