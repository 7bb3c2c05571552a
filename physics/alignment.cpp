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
  Eigen::MatrixXd m =
      Eigen::MatrixXd::Zero(particles.rows() * map.features_per_particle(), targets.cols());
  Eigen::MatrixXd xb, z, phi;
  for (Eigen::Index start = 0; start < n; start += block) {
    const Eigen::Index rows = std::min(block, n - start);
    xb = x.middleRows(start, rows);
    map.forward(xb, particles, z, phi);
    m.noalias() += phi.transpose() * targets.middleRows(start, rows);
  }
  return m / static_cast<double>(n);
}

namespace {

// Sums the per-feature-column values of `v` (F) into one per particle (N).
Eigen::VectorXd per_particle(const Eigen::VectorXd& v, Eigen::Index n_particles) {
  Eigen::VectorXd out = v.head(n_particles);
  for (Eigen::Index start = n_particles; start < v.size(); start += n_particles)
    out += v.segment(start, n_particles);
  return out;
}

}  // namespace

Eigen::VectorXd particle_scores(const FeatureMap& map, const Eigen::MatrixXd& x,
                                const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles) {
  return per_particle(alignment_moments(map, x, targets, particles).rowwise().squaredNorm(),
                      particles.rows());
}

const std::vector<std::string>& alignment_objective_names() {
  static const std::vector<std::string> names = {"alignment", "normalised", "squared_loss"};
  return names;
}

AlignmentObjective alignment_objective_kind(const std::string& name) {
  const auto& names = alignment_objective_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<AlignmentObjective>(i);
  throw std::invalid_argument("unknown alignment objective '" + name + "'");
}

double alignment_objective(const FeatureMap& map, const Eigen::MatrixXd& x,
                           const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles,
                           AlignmentObjective objective, double alpha) {
  const double n = static_cast<double>(x.rows()), big_n = static_cast<double>(particles.rows());
  const Eigen::MatrixXd phi = map.features(x, particles);
  const Eigen::MatrixXd m = phi.transpose() * targets / n;
  const double a = m.squaredNorm() / big_n;
  if (objective == AlignmentObjective::alignment) return a;
  const Eigen::MatrixXd g = phi.transpose() * phi / n;
  if (objective == AlignmentObjective::squared_loss)
    return a - g.squaredNorm() / (2.0 * alpha * big_n * big_n);
  const double tau = (targets.transpose() * targets).norm() / n;
  return m.squaredNorm() / (g.norm() * tau);
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
  const Eigen::Index big_n = particles.rows();
  const double n = static_cast<double>(x.rows()), gamma = settings_.gamma,
               dn = static_cast<double>(big_n), alpha = settings_.alpha;
  const AlignmentObjective objective = settings_.objective;
  map_.forward(x, particles, z_, phi_);
  moments_.noalias() = phi_.transpose() * batch_targets_;  // M = Φᵀ T / n      (F, C)
  moments_ /= n;
  const double m2 = moments_.squaredNorm();
  if (value.size() != big_n) value.resize(big_n);
  // dJ: ∂(N J)/∂Φ (n, F); the total is U = −γ N J, so ∂U/∂Φ = −γ dJ.
  // alignment: N J = ‖M‖², ∂/∂Φ = (2/n) T Mᵀ.
  if (gradient) {
    d_phi_.noalias() = batch_targets_ * moments_.transpose();
    d_phi_ *= 2.0 / n;
  }
  switch (objective) {
    case AlignmentObjective::alignment:
      value = -gamma * per_particle(moments_.rowwise().squaredNorm(), big_n);  // −γ ‖m_k‖²
      break;
    case AlignmentObjective::squared_loss: {
      // N J = ‖M‖² − ‖G‖²/(2αN),  ∂‖G‖²/∂Φ = (4/n) Φ G
      gram_.noalias() = phi_.transpose() * phi_;
      gram_ /= n;
      const Eigen::VectorXd pair_rows = gram_.rowwise().squaredNorm();
      value =
          -gamma *
          per_particle(moments_.rowwise().squaredNorm() - pair_rows / (2.0 * alpha * dn), big_n);
      if (gradient) d_phi_.noalias() -= (2.0 / (alpha * dn * n)) * (phi_ * gram_);
      break;
    }
    case AlignmentObjective::normalised: {
      // N J = N ‖M‖² / (‖G‖ τ),  ∂‖G‖/∂Φ = (2/(n ‖G‖)) Φ G
      gram_.noalias() = phi_.transpose() * phi_;
      gram_ /= n;
      const double g = gram_.norm();
      const double tau = (batch_targets_.transpose() * batch_targets_).norm() / n;
      const double j = m2 / (g * tau);
      value.setConstant(-gamma * j);
      if (gradient) {
        d_phi_ *= dn / (g * tau);
        d_phi_.noalias() -= (dn * m2 / (g * g * tau) * 2.0 / (n * g)) * (phi_ * gram_);
      }
      break;
    }
  }
  const double c = settings_.anchor_precision;
  if (c != 0.0) value += (0.5 * c) * particles.rowwise().squaredNorm();
  if (!gradient) return;
  d_phi_ *= -gamma;
  map_.backward(x, particles, z_, phi_, d_phi_, work_, *gradient);
  if (c != 0.0) *gradient += c * particles;
}

std::string AlignmentPotential::describe() const {
  std::ostringstream o;
  o << alignment_objective_names()[static_cast<std::size_t>(settings_.objective)]
    << " gamma=" << settings_.gamma << " map=" << map_.describe()
    << (settings_.centred ? " centred" : "");
  if (settings_.objective == AlignmentObjective::squared_loss) o << " alpha=" << settings_.alpha;
  if (settings_.anchor_precision != 0.0) o << " anchor=" << settings_.anchor_precision;
  o << " batch="
    << (settings_.batch_size ? std::to_string(settings_.batch_size) : std::string("all"));
  return o.str();
}

}  // namespace cpm
