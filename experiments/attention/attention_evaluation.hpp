#pragma once
// Evaluation of a trained classifier: class probabilities over a sequence set, the metrics of
// docs/model.md §2 (accuracy, MCC, ECE with 15 bins, log loss, Brier) and the robustness conditions
// (word dropout 10 % and 20 %, adjacent swaps).
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "experiments/attention/attention_data.hpp"
#include "learning/classification_metrics.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

// The five metrics in the order of the tables (accuracy, mcc, ece, log_loss, brier), as values and
// back, and the conditions evaluate_conditions gives (clean, then the perturbed ones).
const std::vector<std::string>& metric_columns();
std::vector<double> metric_values(const ClassificationMetrics& m);
ClassificationMetrics metrics_from_values(const double* values);
std::vector<std::string> condition_names(bool robustness);

// (n, C) probabilities of the model (inference mode) for every sequence, batch by batch.
Eigen::MatrixXd predict_probabilities(TransformerClassifier<float>& model, const SequenceSet& data,
                                      int batch_size);

struct EvaluationCondition {
  std::string name;  // clean | word_dropout_10 | word_dropout_20 | adjacent_swaps
  ClassificationMetrics result;
  Eigen::VectorXi predictions;  // the most probable class of every example
};

// The clean metrics and, if `robustness`, the three perturbed conditions.
std::vector<EvaluationCondition> evaluate_conditions(TransformerClassifier<float>& model,
                                                     const SequenceSet& data, int batch_size,
                                                     bool robustness, std::uint64_t seed);

}  // namespace cpm
