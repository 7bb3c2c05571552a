#include "learning/linear_classifier.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "learning/lbfgs.hpp"

namespace cpm {

Eigen::MatrixXd softmax_rows(const Eigen::MatrixXd& scores) {
  Eigen::MatrixXd p = scores;
  p.colwise() -= scores.rowwise().maxCoeff();
  p = p.array().exp();
  p.array().colwise() /= p.rowwise().sum().array();
  return p;
}

namespace {

Eigen::MatrixXd one_hot(const Eigen::VectorXi& labels, int classes) {
  Eigen::MatrixXd y = Eigen::MatrixXd::Zero(labels.size(), classes);
  for (Eigen::Index i = 0; i < labels.size(); ++i) y(i, labels[i]) = 1.0;
  return y;
}

// Scores S = F W_top + 1 bᵀ for weights (N+1, C) whose last row is the bias b.
Eigen::MatrixXd affine_scores(const Eigen::MatrixXd& f, const Eigen::MatrixXd& w) {
  const Eigen::Index n_features = f.cols();
  Eigen::MatrixXd s = f * w.topRows(n_features);
  s.rowwise() += w.row(n_features);
  return s;
}

}  // namespace

// Minimises the mean cross-entropy of softmax(a S) over a > 0 by Newton's method in a
// (convex: the second derivative is the mean variance of S_i under p_i).
double fit_temperature(const Eigen::MatrixXd& s, const Eigen::VectorXi& labels) {
  double a = 1.0;
  const double n = static_cast<double>(s.rows());
  for (int it = 0; it < 50; ++it) {
    const Eigen::MatrixXd p = softmax_rows(a * s);
    double first = 0.0, second = 0.0;
    for (Eigen::Index i = 0; i < s.rows(); ++i) {
      const double mean = p.row(i).dot(s.row(i));
      first += mean - s(i, labels[i]);
      second += p.row(i).dot(s.row(i).cwiseAbs2()) - mean * mean;
    }
    first /= n;
    second /= n;
    if (second <= 1e-300) break;
    const double next = std::clamp(a - first / second, 0.1 * a, 10.0 * a);
    if (std::abs(next - a) < 1e-10 * a) break;
    a = next;
  }
  return a;
}

double LinearClassifier::logistic_objective(const Eigen::MatrixXd& f, const Eigen::VectorXi& labels,
                                            const Eigen::MatrixXd& w, double l2,
                                            Eigen::MatrixXd* gradient) {
  const Eigen::Index n = f.rows(), n_features = f.cols();
  const Eigen::MatrixXd s = affine_scores(f, w);
  const Eigen::VectorXd row_max = s.rowwise().maxCoeff();
  Eigen::MatrixXd p = s;
  p.colwise() -= row_max;
  p = p.array().exp();
  const Eigen::VectorXd row_sum = p.rowwise().sum();
  double loss = 0.0;  // −log p_{y_i} = log Σ_c exp(s_ic) − s_{i y_i}
  for (Eigen::Index i = 0; i < n; ++i) loss += row_max[i] + std::log(row_sum[i]) - s(i, labels[i]);
  loss /= static_cast<double>(n);
  const auto top = w.topRows(n_features);
  loss += 0.5 * l2 * top.squaredNorm();
  if (gradient) {
    p.array().colwise() /= row_sum.array();
    for (Eigen::Index i = 0; i < n; ++i) p(i, labels[i]) -= 1.0;  // P − Y
    gradient->resize(w.rows(), w.cols());
    gradient->topRows(n_features).noalias() = f.transpose() * p / static_cast<double>(n);
    gradient->topRows(n_features) += l2 * top;
    gradient->row(n_features) = p.colwise().mean();
  }
  return loss;
}

LinearClassifier LinearClassifier::fit(const Eigen::MatrixXd& features,
                                       const Eigen::VectorXi& labels, int classes,
                                       const ClassifierSettings& settings) {
  if (features.rows() != labels.size() || features.rows() < 2)
    throw std::invalid_argument("classifier: features and labels differ in number of rows");
  LinearClassifier c;
  const Eigen::Index n = features.rows(), n_features = features.cols();
  // Centred features scaled by 1/√N: the penalty is then that of kernel ridge (or kernel
  // logistic) regression with the feature kernel K_Ω = ΦΦᵀ/N itself.
  c.mean_ = features.colwise().mean();
  c.feature_scale_ = 1.0 / std::sqrt(static_cast<double>(n_features));
  const Eigen::MatrixXd f = (features.rowwise() - c.mean_) * c.feature_scale_;

  if (settings.kind == ClassifierSettings::Kind::ridge) {
    // Centred features: the bias is the target mean; W = (FᵀF + n l2 I)⁻¹ Fᵀ (Y − Ȳ).
    const Eigen::MatrixXd y = one_hot(labels, classes);
    const Eigen::RowVectorXd y_mean = y.colwise().mean();
    Eigen::MatrixXd gram = f.transpose() * f;
    gram.diagonal().array() += static_cast<double>(n) * settings.l2;
    c.weights_.resize(n_features + 1, classes);
    c.weights_.topRows(n_features) = gram.ldlt().solve(f.transpose() * (y.rowwise() - y_mean));
    c.weights_.row(n_features) = y_mean;
    c.temperature_ = fit_temperature(affine_scores(f, c.weights_), labels);
    return c;
  }
  Eigen::VectorXd w = Eigen::VectorXd::Zero((n_features + 1) * classes);
  Eigen::MatrixXd g;
  auto objective = [&](const Eigen::VectorXd& v, Eigen::VectorXd& grad) {
    const Eigen::Map<const Eigen::MatrixXd> wm(v.data(), n_features + 1, classes);
    const double value = logistic_objective(f, labels, wm, settings.l2, &g);
    grad = Eigen::Map<const Eigen::VectorXd>(g.data(), g.size());
    return value;
  };
  const LbfgsResult r =
      minimise_lbfgs(objective, w, {10, settings.max_iterations, settings.tolerance});
  c.iterations_ = r.iterations;
  c.weights_ = Eigen::Map<const Eigen::MatrixXd>(w.data(), n_features + 1, classes);
  return c;
}

Eigen::MatrixXd LinearClassifier::scores(const Eigen::MatrixXd& features) const {
  return affine_scores((features.rowwise() - mean_) * feature_scale_, weights_);
}

Eigen::MatrixXd LinearClassifier::probabilities(const Eigen::MatrixXd& features) const {
  return softmax_rows(logits(features));
}

Eigen::MatrixXd LinearClassifier::logits(const Eigen::MatrixXd& features) const {
  return temperature_ * scores(features);
}

}  // namespace cpm
