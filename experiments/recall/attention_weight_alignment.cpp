#include "experiments/recall/attention_weight_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "solvers/simd_math.hpp"

namespace cpm {

namespace {

constexpr Eigen::Index kPairBlock = 2048;  // the fewest pairs in a block of queries
constexpr Eigen::Index kMaxBlocks = 64;    // at most about so many blocks (their key sums)

// log Σ_j exp(v_j) of a row or a segment. Scalar std::exp: Eigen's vectorised exp in double
// draws false -Wuninitialized reports from GCC 12's AVX-512 headers.
template <class V>
double log_sum_exp(const V& v) {
  const double top = v.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index j = 0; j < v.size(); ++j) sum += std::exp(v[j] - top);
  return top + std::log(sum);
}

// log Σ_k exp(x_k + y_k) over m entries (the log-kernel of a pair from its two score rows).
double log_sum_exp_of_sum(const double* x, const double* y, Eigen::Index m) {
  constexpr Eigen::Index width = SimdDouble::size;
  double top = -std::numeric_limits<double>::infinity();
  for (Eigen::Index k = 0; k < m; ++k) top = std::max(top, x[k] + y[k]);
  const SimdDouble shift(top);
  SimdDouble sums(0.0);
  Eigen::Index k = 0;
  for (; k + width <= m; k += width)
    sums +=
        xsimd::exp(SimdDouble::load_unaligned(x + k) + SimdDouble::load_unaligned(y + k) - shift);
  double sum = xsimd::hadd(sums);
  for (; k < m; ++k) sum += std::exp(x[k] + y[k] - top);
  return top + std::log(sum);
}

// r_k = w exp(x_k + y_k − c) added to both a and b (a pair's term of its query's and key's sums).
void add_scaled_exponentials(double* a, double* b, const double* x, const double* y, double c,
                             double w, Eigen::Index m) {
  constexpr Eigen::Index width = SimdDouble::size;
  const SimdDouble shift(c), weight(w);
  Eigen::Index k = 0;
  for (; k + width <= m; k += width) {
    const SimdDouble r = weight * xsimd::exp(SimdDouble::load_unaligned(x + k) +
                                             SimdDouble::load_unaligned(y + k) - shift);
    (SimdDouble::load_unaligned(a + k) + r).store_unaligned(a + k);
    (SimdDouble::load_unaligned(b + k) + r).store_unaligned(b + k);
  }
  for (; k < m; ++k) {
    const double r = w * std::exp(x[k] + y[k] - c);
    a[k] += r;
    b[k] += r;
  }
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

AttentionWeightPotential::AttentionWeightPotential(AttentionTargets targets, double gamma,
                                                   KeyNormalisation keys)
    : t_(std::move(targets)), gamma_(gamma), keys_(keys) {
  const Eigen::Index n_q = t_.queries.rows(), d = t_.queries.cols();
  if (t_.keys.cols() != d || static_cast<Eigen::Index>(t_.key_begin.size()) != n_q ||
      static_cast<Eigen::Index>(t_.key_end.size()) != n_q || n_q == 0)
    throw std::invalid_argument("attention weight alignment: inconsistent queries and keys");
  query_offset_ = -0.5 * t_.queries.rowwise().squaredNorm();
  key_offset_ = -0.5 * t_.keys.rowwise().squaredNorm();
  Eigen::Index p = 0;
  for (Eigen::Index a = 0; a < n_q; ++a) {
    if (t_.key_begin[a] < 0 || t_.key_end[a] > t_.keys.rows() || t_.key_end[a] <= t_.key_begin[a])
      throw std::invalid_argument("attention weight alignment: a query sees no keys");
    first_pair_.push_back(p);
    double entropy = 0.0, mass = 0.0;
    for (Eigen::Index i = t_.key_begin[a]; i < t_.key_end[a]; ++i, ++p) {
      if (p >= t_.pairs())
        throw std::invalid_argument("attention weight alignment: fewer targets than pairs");
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
  // Blocks of whole queries with at least max(kPairBlock, pairs / kMaxBlocks) pairs each.
  const Eigen::Index per_block = std::max(kPairBlock, (p + kMaxBlocks - 1) / kMaxBlocks);
  for (Eigen::Index a = 0; a < n_q;) {
    Block block{a, a, t_.key_begin[a], t_.key_end[a]};
    while (block.end_query < n_q &&
           first_pair_[block.end_query] - first_pair_[block.first_query] < per_block) {
      block.key_lo = std::min(block.key_lo, t_.key_begin[block.end_query]);
      block.key_hi = std::max(block.key_hi, t_.key_end[block.end_query]);
      ++block.end_query;
    }
    blocks_.push_back(block);
    a = block.end_query;
  }
}

double AttentionWeightPotential::cross_entropy(const Eigen::MatrixXd& particles,
                                               Eigen::MatrixXd* gradient) const {
  const Eigen::Index n_q = t_.queries.rows(), m = particles.rows();
  const auto blocks = static_cast<Eigen::Index>(blocks_.size());
  log_kernel_.resize(t_.pairs());
  weights_.resize(t_.pairs());
  query_scores_.noalias() = t_.queries * particles.transpose();
  key_scores_.noalias() = t_.keys * particles.transpose();
  // z_k = ω_kᵀx_a + ω_kᵀy_i for pair (a, i), and log κ_ai = offsets + logsumexp_k z_k.
#pragma omp parallel for schedule(dynamic)
  for (Eigen::Index b = 0; b < blocks; ++b)
    for (Eigen::Index a = blocks_[b].first_query; a < blocks_[b].end_query; ++a)
      for (Eigen::Index i = t_.key_begin[a], p = first_pair_[a]; i < t_.key_end[a]; ++i, ++p)
        log_kernel_[p] =
            query_offset_[a] + key_offset_[i] +
            log_sum_exp_of_sum(query_scores_.row(a).data(), key_scores_.row(i).data(), m);
  // Normalised keys: log κ_ai − log n(y_i), n = ‖φ(y_i)‖₁ = e^{−|y|²/2} Σ_k e^{z_k} or
  // ‖φ(y_i)‖₂ = e^{−|y|²/2} (Σ_k e^{2 z_k})^{1/2}, z_k = ω_kᵀy_i.
  if (keys_ != KeyNormalisation::none) {
    const double c = keys_ == KeyNormalisation::l2 ? 2.0 : 1.0;
    key_log_norm_.resize(t_.keys.rows());
    for (Eigen::Index i = 0; i < t_.keys.rows(); ++i)
      key_log_norm_[i] = key_offset_[i] + log_sum_exp((c * key_scores_.row(i)).eval()) / c;
    for (Eigen::Index a = 0; a < n_q; ++a)
      for (Eigen::Index i = t_.key_begin[a], p = first_pair_[a]; i < t_.key_end[a]; ++i, ++p)
        log_kernel_[p] -= key_log_norm_[i];
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
  // R_ai = (â_ai − p_ai) r_·,ai, summed over each query's keys and over each key's queries; the
  // keys' sums per block (over the block's key range), then in block order.
  const bool normalised = keys_ != KeyNormalisation::none;
  query_weights_.resize(n_q, m);
  key_weights_.resize(blocks_.size());
#pragma omp parallel for schedule(dynamic)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Block& block = blocks_[b];
    Rows& keys = key_weights_[b];
    keys.setZero(block.key_hi - block.key_lo, m);
    for (Eigen::Index a = block.first_query; a < block.end_query; ++a) {
      double* to_query = query_weights_.row(a).data();
      std::fill_n(to_query, m, 0.0);
      const double* x = query_scores_.row(a).data();
      for (Eigen::Index i = t_.key_begin[a], p = first_pair_[a]; i < t_.key_end[a]; ++i, ++p) {
        // logsumexp_k z_k (log κ before the key's normalisation)
        const double shift = log_kernel_[p] - query_offset_[a] - key_offset_[i] +
                             (normalised ? key_log_norm_[i] : 0.0);
        const double w = weights_[p] - t_.target[p];
        add_scaled_exponentials(to_query, keys.row(i - block.key_lo).data(), x,
                                key_scores_.row(i).data(), shift, w, m);
      }
    }
  }
  key_total_.setZero(t_.keys.rows(), m);
  for (Eigen::Index b = 0; b < blocks; ++b)
    key_total_.middleRows(blocks_[b].key_lo, blocks_[b].key_hi - blocks_[b].key_lo) +=
        key_weights_[b];
  if (keys_ != KeyNormalisation::none) {
    // −∂ log n(y_i)/∂ω_k = −softmax_k(c z)_k y_i, weighted by W_i = Σ_{a sees i} (â_ai − p_ai).
    const double c = keys_ == KeyNormalisation::l2 ? 2.0 : 1.0;
    key_pair_weights_.setZero(t_.keys.rows());
    for (Eigen::Index a = 0; a < n_q; ++a)
      for (Eigen::Index i = t_.key_begin[a], p = first_pair_[a]; i < t_.key_end[a]; ++i, ++p)
        key_pair_weights_[i] += weights_[p] - t_.target[p];
    for (Eigen::Index i = 0; i < t_.keys.rows(); ++i) {
      auto row = key_total_.row(i);
      const double top = c * key_scores_.row(i).maxCoeff();
      const double norm = std::exp(c * key_log_norm_[i] - c * key_offset_[i] - top);
      for (Eigen::Index k = 0; k < m; ++k)
        row[k] -= key_pair_weights_[i] * std::exp(c * key_scores_(i, k) - top) / norm;
    }
  }
  gradient->noalias() = query_weights_.transpose() * t_.queries;
  gradient->noalias() += key_total_.transpose() * t_.keys;
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
