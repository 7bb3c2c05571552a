#include "experiments/recall/capacity_diagnostic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cpm {

void CapacityMeter::add(const Eigen::MatrixXd& log_gram, const Eigen::VectorXd& log_weights,
                        int own, double temperature) {
  const Eigen::Index S = log_gram.rows();
  if (log_gram.cols() != S || log_weights.size() != S || own < 0 || own >= S)
    throw std::invalid_argument("capacity diagnostic: inconsistent sizes");
  double other = -std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < S; ++j)
    if (j != own) other = std::max(other, log_weights[j]);
  // (w_own − w_other) / max(w_own, w_other), from the logarithms
  const double gap = log_weights[own] - other;
  const double margin = S < 2 ? 1.0 : (gap >= 0.0 ? -std::expm1(-gap) : std::expm1(gap));
  sum_.margin += margin;
  sum_.own_key_wins += margin > 0.0 ? 1.0 : 0.0;

  const Eigen::VectorXd log_norm2 = log_gram.diagonal();  // log ‖φ(k_i)‖²
  sum_.norm_spread += (log_norm2.maxCoeff() - log_norm2.minCoeff()) / (2.0 * std::log(10.0));
  // ‖φ(k_i)‖ / max_j ‖φ(k_j)‖ (the CV does not change)
  const Eigen::ArrayXd norms = (0.5 * (log_norm2.array() - log_norm2.maxCoeff())).exp();
  const double mean = norms.mean();
  sum_.norm_cv += std::sqrt((norms - mean).square().mean()) / mean;
  sum_.effective_temperature += temperature;
  double coherence = 0.0, largest = 0.0;
  for (Eigen::Index i = 0; i < S; ++i)
    for (Eigen::Index j = i + 1; j < S; ++j) {
      const double c = std::exp(log_gram(i, j) - 0.5 * (log_norm2[i] + log_norm2[j]));
      coherence += c;
      largest = std::max(largest, c);
    }
  sum_.coherence_mean += S < 2 ? 0.0 : coherence / (0.5 * static_cast<double>(S * (S - 1)));
  sum_.coherence_max += largest;

  // σ_i² are the eigenvalues of G, here of G / max_i G_ii (p does not change)
  const Eigen::MatrixXd gram = (log_gram.array() - log_norm2.maxCoeff()).exp().matrix();
  const Eigen::VectorXd lambda =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly).eigenvalues();
  const Eigen::VectorXd sigma = lambda.cwiseMax(0.0).cwiseSqrt();
  const double total = sigma.sum();
  double entropy = 0.0;
  for (Eigen::Index i = 0; i < S; ++i)
    if (sigma[i] > 0.0) entropy -= sigma[i] / total * std::log(sigma[i] / total);
  sum_.effective_rank += std::exp(entropy);
  ++sum_.sequences;
}

CapacityDiagnostic CapacityMeter::result() const {
  CapacityDiagnostic d = sum_;
  if (d.sequences == 0) return d;
  const double n = d.sequences;
  d.margin /= n;
  d.own_key_wins /= n;
  d.norm_spread /= n;
  d.norm_cv /= n;
  d.effective_temperature /= n;
  d.coherence_mean /= n;
  d.coherence_max /= n;
  d.effective_rank /= n;
  return d;
}

}  // namespace cpm
