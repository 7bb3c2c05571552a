#include "learning/classification_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace cpm {

ClassificationMetrics classification_metrics(const Eigen::MatrixXd& p, const Eigen::VectorXi& y,
                                             int bins) {
  const Eigen::Index n = p.rows(), classes = p.cols();
  if (y.size() != n || n == 0)
    throw std::invalid_argument("metrics: labels do not match predictions");
  ClassificationMetrics m;
  Eigen::VectorXi predictions(n);
  std::vector<double> bin_count(bins, 0.0), bin_correct(bins, 0.0), bin_confidence(bins, 0.0);
  bool undefined = false;
  for (Eigen::Index i = 0; i < n; ++i) {
    Eigen::Index predicted = 0;
    const double confidence = p.row(i).maxCoeff(&predicted);
    predictions[i] = static_cast<int>(predicted);
    const bool correct = predicted == y[i];
    m.accuracy += correct;
    m.log_loss -= std::log(std::max(p(i, y[i]), 1e-15));
    if (classes == 2) {
      m.brier += std::pow(p(i, 1) - (y[i] == 1 ? 1.0 : 0.0), 2);
    } else {
      for (Eigen::Index c = 0; c < classes; ++c)
        m.brier += std::pow(p(i, c) - (y[i] == c ? 1.0 : 0.0), 2);
    }
    if (!(confidence >= 0.0 && confidence <= 1.0)) {  // NaN probabilities: no bin, NaN metrics
      undefined = true;
      continue;
    }
    const int b = std::min(static_cast<int>(confidence * bins), bins - 1);
    bin_count[b] += 1.0;
    bin_correct[b] += correct;
    bin_confidence[b] += confidence;
  }
  for (int b = 0; b < bins; ++b)
    if (bin_count[b] > 0) m.ece += std::abs(bin_correct[b] - bin_confidence[b]);
  const double dn = static_cast<double>(n);
  m.accuracy /= dn;
  m.log_loss /= dn;
  m.brier /= dn;
  m.ece /= dn;
  if (undefined) m.ece = m.log_loss = std::numeric_limits<double>::quiet_NaN();
  m.mcc = matthews_correlation(y, predictions, static_cast<int>(classes));
  return m;
}

double matthews_correlation(const Eigen::VectorXi& labels, const Eigen::VectorXi& predictions,
                            int classes) {
  Eigen::VectorXd truth = Eigen::VectorXd::Zero(classes),
                  predicted = Eigen::VectorXd::Zero(classes);
  double correct = 0.0;
  for (Eigen::Index i = 0; i < labels.size(); ++i) {
    truth[labels[i]] += 1;
    predicted[predictions[i]] += 1;
    correct += labels[i] == predictions[i];
  }
  const double s = static_cast<double>(labels.size());
  const double denominator = (s * s - predicted.squaredNorm()) * (s * s - truth.squaredNorm());
  return denominator > 0.0 ? (correct * s - predicted.dot(truth)) / std::sqrt(denominator) : 0.0;
}

}  // namespace cpm
