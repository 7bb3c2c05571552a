#include "experiments/attention/attention_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "learning/sequence_perturbation.hpp"

namespace cpm {

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

AttentionMetrics attention_metrics(const Eigen::MatrixXd& probabilities,
                                   const Eigen::VectorXi& labels) {
  AttentionMetrics m;
  m.metrics = classification_metrics(probabilities, labels, 15);
  Eigen::VectorXi predictions(labels.size());
  for (Eigen::Index i = 0; i < labels.size(); ++i) probabilities.row(i).maxCoeff(&predictions[i]);
  m.mcc = matthews_correlation(labels, predictions, static_cast<int>(probabilities.cols()));
  return m;
}

Eigen::MatrixXd predict_probabilities(TransformerClassifier<float>& model, const SequenceSet& data,
                                      int batch_size) {
  const int K = model.shape().classes;
  Eigen::MatrixXd probabilities(data.size(), K);
  std::vector<int> tokens, lengths;
  for (std::size_t start = 0; start < data.size(); start += batch_size) {
    const int B = static_cast<int>(std::min<std::size_t>(batch_size, data.size() - start));
    int L = 1;
    for (int b = 0; b < B; ++b) L = std::max(L, static_cast<int>(data.tokens[start + b].size()));
    tokens.assign(static_cast<std::size_t>(B) * L, 0);
    lengths.assign(B, 0);
    for (int b = 0; b < B; ++b) {
      const auto& t = data.tokens[start + b];
      std::copy(t.begin(), t.end(), tokens.begin() + static_cast<std::ptrdiff_t>(b) * L);
      lengths[b] = static_cast<int>(t.size());
    }
    model.forward({tokens.data(), lengths.data(), nullptr, B, L});
    for (int b = 0; b < B; ++b)
      for (int k = 0; k < K; ++k) probabilities(start + b, k) = model.probabilities()[b * K + k];
  }
  return probabilities;
}

std::vector<EvaluationCondition> evaluate_conditions(TransformerClassifier<float>& model,
                                                     const SequenceSet& data, int batch_size,
                                                     bool robustness, std::uint64_t seed) {
  const Eigen::VectorXi labels =
      Eigen::Map<const Eigen::VectorXi>(data.labels.data(), data.labels.size());
  std::vector<EvaluationCondition> out;
  out.push_back(
      {"clean", attention_metrics(predict_probabilities(model, data, batch_size), labels)});
  if (!robustness) return out;
  auto perturbed = [&](auto perturb) {
    SequenceSet p = data;
    for (std::size_t i = 0; i < p.size(); ++i) p.tokens[i] = perturb(data.tokens[i], i);
    return attention_metrics(predict_probabilities(model, p, batch_size), labels);
  };
  for (const double rate : {0.1, 0.2})
    out.push_back({rate == 0.1 ? "word_dropout_10" : "word_dropout_20",
                   perturbed([&](const std::vector<int>& t, std::size_t i) {
                     return word_dropout(t, rate, seed, i);
                   })});
  out.push_back({"adjacent_swaps", perturbed([&](const std::vector<int>& t, std::size_t i) {
                   return adjacent_swaps(t, 0.1, seed, i);
                 })});
  return out;
}

}  // namespace cpm
