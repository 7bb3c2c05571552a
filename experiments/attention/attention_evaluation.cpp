#include "experiments/attention/attention_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "transformer/sequence_perturbation.hpp"

namespace cpm {

const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> columns = {"accuracy", "mcc", "ece", "log_loss", "brier"};
  return columns;
}

std::vector<double> metric_values(const ClassificationMetrics& m) {
  return {m.accuracy, m.mcc, m.ece, m.log_loss, m.brier};
}

ClassificationMetrics metrics_from_values(const double* v) {
  ClassificationMetrics m;
  m.accuracy = v[0];
  m.mcc = v[1];
  m.ece = v[2];
  m.log_loss = v[3];
  m.brier = v[4];
  return m;
}

std::vector<std::string> condition_names(bool robustness) {
  if (!robustness) return {"clean"};
  return {"clean", "word_dropout_10", "word_dropout_20", "adjacent_swaps"};
}

Eigen::MatrixXd predict_probabilities(TransformerClassifier<float>& model, const SequenceSet& data,
                                      int batch_size) {
  const int K = model.shape().classes;
  Eigen::MatrixXd probabilities(data.size(), K);
  BatchBuffer buffer;
  for (std::size_t start = 0; start < data.size(); start += batch_size) {
    const int B = static_cast<int>(std::min<std::size_t>(batch_size, data.size() - start));
    TokenBatch batch = buffer.gather_range(data, start, B);
    batch.labels = nullptr;  // inference
    model.forward(batch);
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
  auto condition = [&](const std::string& name, const Eigen::MatrixXd& p) {
    EvaluationCondition c{name, classification_metrics(p, labels), Eigen::VectorXi(p.rows())};
    for (Eigen::Index i = 0; i < p.rows(); ++i) p.row(i).maxCoeff(&c.predictions[i]);
    return c;
  };
  std::vector<EvaluationCondition> out;
  out.push_back(condition("clean", predict_probabilities(model, data, batch_size)));
  if (!robustness) return out;
  auto perturbed = [&](const std::string& name, auto perturb) {
    SequenceSet p = data;
    for (std::size_t i = 0; i < p.size(); ++i) p.tokens[i] = perturb(data.tokens[i], i);
    return condition(name, predict_probabilities(model, p, batch_size));
  };
  for (const double rate : {0.1, 0.2})
    out.push_back(perturbed(
        rate == 0.1 ? "word_dropout_10" : "word_dropout_20",
        [&](const std::vector<int>& t, std::size_t i) { return word_dropout(t, rate, seed, i); }));
  out.push_back(perturbed("adjacent_swaps", [&](const std::vector<int>& t, std::size_t i) {
    return adjacent_swaps(t, 0.1, seed, i);
  }));
  return out;
}

}  // namespace cpm
