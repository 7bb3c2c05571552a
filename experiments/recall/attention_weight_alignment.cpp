#include "experiments/recall/attention_weight_alignment.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "transformer/thread_index.hpp"

namespace cpm {

namespace {

constexpr Eigen::Index kPairBlock = 2048;  // pairs per block of Z = U Ωᵀ

// log Σ_j exp(v_j) of a row or a segment. Scalar std::exp: Eigen's vectorised exp in double
// draws false -Wuninitialized reports from GCC 12's AVX-512 headers.
template <class V>
double log_sum_exp(const V& v) {
  const double top = v.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index j = 0; j < v.size(); ++j) sum += std::exp(v[j] - top);
  return top + std::log(sum);
}

}  // namespace

void set_softmax_targets(AttentionTargets& t, double temperature) {
  const Eigen::Index n_q = t.queries.rows();
  Eigen::Index pairs = 0;
  for (Eigen::Index a = 0; a < n_q; ++a) pairs += t.key_end[a] - t.key_begin[a];
  t.target.resize(pairs);
  for (Eigen::Index a = 0, p = 0; a < n_q; ++a) {
    const Eigen::Index count = t.key_end[a] - t.key_begin[a];
    auto s = t.target.segment(p, count);
    s.noalias() =
        temperature * (t.keys.middleRows(t.key_begin[a], count) * t.queries.row(a).transpose());
    const double normaliser = log_sum_exp(s);
    for (Eigen::Index i = 0; i < count; ++i) s[i] = std::exp(s[i] - normaliser);
    p += count;
  }
}

AttentionWeightPotential::AttentionWeightPotential(AttentionTargets targets, double gamma)
    : t_(std::move(targets)), gamma_(gamma) {
  const Eigen::Index n_q = t_.queries.rows(), d = t_.queries.cols();
  if (t_.keys.cols() != d || static_cast<Eigen::Index>(t_.key_begin.size()) != n_q ||
      static_cast<Eigen::Index>(t_.key_end.size()) != n_q || n_q == 0)
    throw std::invalid_argument("attention weight alignment: inconsistent queries and keys");
  u_.resize(t_.pairs(), d);
  offset_.resize(t_.pairs());
  query_of_pair_.resize(t_.pairs());
  Eigen::Index p = 0;
  for (Eigen::Index a = 0; a < n_q; ++a) {
    if (t_.key_begin[a] < 0 || t_.key_end[a] > t_.keys.rows() || t_.key_end[a] <= t_.key_begin[a])
      throw std::invalid_argument("attention weight alignment: a query sees no keys");
    first_pair_.push_back(p);
    double entropy = 0.0, mass = 0.0;
    for (Eigen::Index i = t_.key_begin[a]; i < t_.key_end[a]; ++i, ++p) {
      if (p >= t_.pairs())
        throw std::invalid_argument("attention weight alignment: fewer targets than pairs");
      u_.row(p) = t_.queries.row(a) + t_.keys.row(i);
      offset_[p] = -0.5 * (t_.queries.row(a).squaredNorm() + t_.keys.row(i).squaredNorm());
      query_of_pair_[p] = a;
      const double target = t_.target[p];
      if (!(target >= 0.0)) throw std::invalid_argument("attention weight alignment: p < 0");
      mass += target;
      if (target > 0.0) entropy -= target * std::log(target);
    }
    if (std::abs(mass - 1.0) > 1e-9)
      throw std::invalid_argument("attention weight alignment: targets of a query must sum to 1");
    target_entropy_ += entropy;
  }
  if (p != t_.pairs())
    throw std::invalid_argument("attention weight alignment: more targets than pairs");
  target_entropy_ /= static_cast<double>(n_q);
  first_pair_.push_back(p);
}

double AttentionWeightPotential::cross_entropy(const Eigen::MatrixXd& particles,
                                               Eigen::MatrixXd* gradient) const {
  const Eigen::Index pairs = t_.pairs(), n_q = t_.queries.rows();
  const Eigen::Index blocks = (pairs + kPairBlock - 1) / kPairBlock;
  log_kernel_.resize(pairs);
  weights_.resize(pairs);
  scratch_.resize(static_cast<std::size_t>(max_threads()));
  for (Eigen::MatrixXd& z : scratch_) z.resize(kPairBlock, particles.rows());  // once per shape
    // log κ_ai = offset + logsumexp_k ω_kᵀu_ai.
#pragma omp parallel for schedule(static)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index first = b * kPairBlock, count = std::min(kPairBlock, pairs - first);
    auto z = scratch_[omp_thread()].topRows(count);
    z.noalias() = u_.middleRows(first, count) * particles.transpose();
    for (Eigen::Index r = 0; r < count; ++r)
      log_kernel_[first + r] = offset_[first + r] + log_sum_exp(z.row(r));
  }
  // â_ai = softmax over the query's keys; U/γ = (1/n_q) Σ −p log â.
  double loss = 0.0;
  for (Eigen::Index a = 0; a < n_q; ++a) {
    const Eigen::Index first = first_pair_[a], count = first_pair_[a + 1] - first;
    const auto log_k = log_kernel_.segment(first, count);
    const double normaliser = log_sum_exp(log_k);
    for (Eigen::Index i = 0; i < count; ++i) {
      weights_[first + i] = std::exp(log_k[i] - normaliser);
      loss -= t_.target[first + i] * (log_k[i] - normaliser);
    }
  }
  loss /= static_cast<double>(n_q);
  if (!gradient) return loss;
  // ∂(U/γ)/∂ω_k = (1/n_q) Σ_pairs (â − p) r_k u, block by block, summed in block order.
  block_gradients_.resize(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index first = b * kPairBlock, count = std::min(kPairBlock, pairs - first);
    auto r = scratch_[omp_thread()].topRows(count);
    r.noalias() = u_.middleRows(first, count) * particles.transpose();
    for (Eigen::Index row = 0; row < count; ++row) {
      const double shift = log_kernel_[first + row] - offset_[first + row];
      const double w = weights_[first + row] - t_.target[first + row];
      for (Eigen::Index k = 0; k < r.cols(); ++k) r(row, k) = w * std::exp(r(row, k) - shift);
    }
    block_gradients_[b].noalias() = r.transpose() * u_.middleRows(first, count);
  }
  gradient->setZero(particles.rows(), particles.cols());
  for (const Eigen::MatrixXd& g : block_gradients_) *gradient += g;
  *gradient /= static_cast<double>(n_q);
  return loss;
}

double AttentionWeightPotential::alignment(const Eigen::MatrixXd& particles) const {
  return cross_entropy(particles, nullptr) - target_entropy_;
}

void AttentionWeightPotential::evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                                        Eigen::MatrixXd* gradient) const {
  const double u = gamma_ * cross_entropy(particles, gradient);
  if (value.size() != particles.rows()) value.resize(particles.rows());
  value.setConstant(u / static_cast<double>(particles.rows()));
  if (gradient) *gradient *= gamma_;
}

std::string AttentionWeightPotential::describe() const {
  std::ostringstream s;
  s << "attention weight alignment (" << t_.queries.rows() << " queries, " << t_.pairs()
    << " pairs, gamma " << gamma_ << ")";
  return s.str();
}

}  // namespace cpm
