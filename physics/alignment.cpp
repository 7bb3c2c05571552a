#include "physics/alignment.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/random_stream.hpp"

namespace cpm {

Eigen::MatrixXd alignment_targets(const Eigen::VectorXi& labels, int classes) {
  if (classes < 2) throw std::invalid_argument("alignment targets need at least two classes");
  const Eigen::Index n = labels.size();
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(n, classes == 2 ? 1 : classes);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= classes)
      throw std::invalid_argument("label " + std::to_string(labels[i]) + " outside 0.." +
                                  std::to_string(classes - 1));
    if (classes == 2)
      t(i, 0) = labels[i] == 1 ? 1.0 : -1.0;
    else
      t(i, labels[i]) = 1.0;
  }
  return t;
}

void centre_targets(Eigen::MatrixXd& targets) {
  targets.rowwise() -= targets.colwise().mean();
}

Eigen::MatrixXd empirical_kernel(const FeatureMap& map, const Eigen::MatrixXd& xa,
                                 const Eigen::MatrixXd& xb, const Eigen::MatrixXd& particles) {
  const Eigen::MatrixXd pa = map.features(xa, particles), pb = map.features(xb, particles);
  return (pa * pb.transpose()) / static_cast<double>(particles.rows());
}

Eigen::MatrixXd alignment_moments(const FeatureMap& map, const Eigen::MatrixXd& x,
                                  const Eigen::MatrixXd& targets,
                                  const Eigen::MatrixXd& particles) {
  if (targets.rows() != x.rows())
    throw std::invalid_argument("alignment: targets and data differ in number of rows");
  constexpr Eigen::Index block = 2048;
  const Eigen::Index n = x.rows();
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(particles.rows(), targets.cols());
  Eigen::MatrixXd xb, z, phi;
  for (Eigen::Index start = 0; start < n; start += block) {
    const Eigen::Index rows = std::min(block, n - start);
    xb = x.middleRows(start, rows);
    map.forward(xb, particles, z, phi);
    m.noalias() += phi.transpose() * targets.middleRows(start, rows);
  }
  return m / static_cast<double>(n);
}

double alignment(const FeatureMap& map, const Eigen::MatrixXd& x, const Eigen::MatrixXd& targets,
                 const Eigen::MatrixXd& particles) {
  return alignment_moments(map, x, targets, particles).squaredNorm() /
         static_cast<double>(particles.rows());
}

double alignment_double_sum(const FeatureMap& map, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles) {
  const Eigen::MatrixXd k = empirical_kernel(map, x, x, particles);
  const Eigen::Index n = x.rows();
  double sum = 0.0;
  for (Eigen::Index c = 0; c < targets.cols(); ++c)
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j) sum += targets(i, c) * targets(j, c) * k(i, j);
  return sum / static_cast<double>(n * n);
}

AlignmentPotential::AlignmentPotential(std::shared_ptr<const Eigen::MatrixXd> x,
                                       Eigen::MatrixXd targets, FeatureMap map,
                                       AlignmentSettings settings)
    : x_(std::move(x)),
      targets_(std::move(targets)),
      map_(std::move(map)),
      settings_(settings),
      current_x_(x_.get()) {
  if (targets_.rows() != x_->rows())
    throw std::invalid_argument("alignment potential: targets and data differ in number of rows");
  if (settings_.batch_size < 0 || settings_.batch_size > x_->rows())
    throw std::invalid_argument("alignment potential: batch size must be in 0..n");
  if (settings_.batch_size == x_->rows()) settings_.batch_size = 0;
  batch_targets_ = targets_;
  if (settings_.centred) centre_targets(batch_targets_);
  select_batch(0);
}

void AlignmentPotential::epoch_permutation(std::uint64_t epoch) {
  if (epoch == permutation_epoch_) return;
  const Eigen::Index n = x_->rows();
  permutation_.resize(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) permutation_[i] = i;
  RandomStream s(settings_.seed, RandomPurpose::alignment_batches, 0, epoch);
  shuffle(permutation_, s);
  permutation_epoch_ = epoch;
}

void AlignmentPotential::select_batch(std::uint64_t step) {
  const Eigen::Index b = settings_.batch_size;
  if (b == 0) return;
  const auto per_epoch = static_cast<std::uint64_t>(x_->rows() / b);
  epoch_permutation(step / per_epoch);
  const Eigen::Index first = static_cast<Eigen::Index>(step % per_epoch) * b;
  batch_x_.resize(b, x_->cols());
  batch_targets_.resize(b, targets_.cols());
  batch_indices_.assign(permutation_.begin() + first, permutation_.begin() + first + b);
  for (Eigen::Index r = 0; r < b; ++r) {
    const Eigen::Index i = batch_indices_[r];
    batch_x_.row(r) = x_->row(i);
    batch_targets_.row(r) = targets_.row(i);
  }
  if (settings_.centred) centre_targets(batch_targets_);
  current_x_ = &batch_x_;
}

void AlignmentPotential::evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                                  Eigen::MatrixXd* gradient) const {
  const Eigen::MatrixXd& x = *current_x_;
  const double n = static_cast<double>(x.rows()), gamma = settings_.gamma;
  map_.forward(x, particles, z_, phi_);
  moments_.noalias() = phi_.transpose() * batch_targets_;  // m = Φᵀ T / n      (N, C)
  moments_ /= n;
  if (value.size() != particles.rows()) value.resize(particles.rows());
  value = -gamma * moments_.rowwise().squaredNorm();  // V_k = −γ ‖m_k‖²
  if (!gradient) return;
  // U = Σ_k V_k:  ∂U/∂m = −2γ m,  ∂U/∂Φ = T (∂U/∂m)ᵀ / n                           (n, N)
  d_phi_.noalias() = batch_targets_ * moments_.transpose();
  d_phi_ *= -2.0 * gamma / n;
  map_.backward(x, particles, z_, phi_, d_phi_, work_, *gradient);
}

std::string AlignmentPotential::describe() const {
  std::ostringstream o;
  o << "alignment gamma=" << settings_.gamma << " map=" << map_.describe()
    << (settings_.centred ? " centred" : "") << " batch="
    << (settings_.batch_size ? std::to_string(settings_.batch_size) : std::string("all"));
  return o.str();
}

}  // namespace cpm
