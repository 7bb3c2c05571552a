#pragma once
// A linear classifier on random features, fitted after the particles are learned.
//  * logistic: multinomial logistic regression, mean cross-entropy + (l2/2)‖W‖² (bias not
//    penalised), minimised by L-BFGS;
//  * ridge: least squares on one-hot targets + l2·‖W‖² per sample, solved in closed form; its
//    scores s become probabilities softmax(a s) with the temperature a fitted on the training
//    set (a one-dimensional convex problem, by Newton's method).
// Features are centred with the training means and scaled by 1/√N, so that the penalty is the
// one of kernel ridge / kernel logistic regression with the feature kernel K_Ω = ΦΦᵀ/N.
#include <Eigen/Dense>
#include <string>

namespace cpm {

struct ClassifierSettings {
  enum class Kind { logistic, ridge };
  Kind kind = Kind::logistic;
  double l2 = 1e-3;
  int max_iterations = 300;
  double tolerance = 1e-6;  // on the gradient's max-norm (logistic)
};

class LinearClassifier {
 public:
  // features (n, N), labels in 0..classes−1.
  static LinearClassifier fit(const Eigen::MatrixXd& features, const Eigen::VectorXi& labels,
                              int classes, const ClassifierSettings& settings);

  // Class probabilities (n, C) = softmax_rows(logits).
  Eigen::MatrixXd probabilities(const Eigen::MatrixXd& features) const;
  // The scores the probabilities are the softmax of (n, C), temperature included.
  Eigen::MatrixXd logits(const Eigen::MatrixXd& features) const;
  // The regularised training objective of the logistic model and its gradient with respect to
  // the weights (N+1, C), last row the bias; exposed for tests.
  static double logistic_objective(const Eigen::MatrixXd& scaled_features,
                                   const Eigen::VectorXi& labels, const Eigen::MatrixXd& weights,
                                   double l2, Eigen::MatrixXd* gradient);

  const Eigen::MatrixXd& weights() const { return weights_; }
  int iterations() const { return iterations_; }

 private:
  Eigen::MatrixXd scores(const Eigen::MatrixXd& features) const;

  Eigen::RowVectorXd mean_;
  double feature_scale_ = 1.0;
  Eigen::MatrixXd weights_;   // (N+1, C)
  double temperature_ = 1.0;  // multiplies the scores (ridge)
  int iterations_ = 0;
};

// Row-wise softmax, shifted by the row maximum.
Eigen::MatrixXd softmax_rows(const Eigen::MatrixXd& scores);

// Temperature scaling: the a > 0 minimising the mean cross-entropy of softmax(a·S) against the
// labels (convex in a; Newton's method). Fitted on held-out rows it calibrates a classifier
// without changing its predictions (C. Guo et al., ICML 2017).
double fit_temperature(const Eigen::MatrixXd& scores, const Eigen::VectorXi& labels);

}  // namespace cpm
