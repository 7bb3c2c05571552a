#include "experiments/attention/token_alignment.hpp"

#include <sstream>
#include <stdexcept>

namespace cpm {

TokenAlignmentPotential::TokenAlignmentPotential(std::shared_ptr<const Eigen::MatrixXd> x,
                                                 Eigen::MatrixXd targets, FeatureMap map,
                                                 double gamma, bool normalised)
    : x_(std::move(x)),
      targets_(std::move(targets)),
      map_(std::move(map)),
      gamma_(gamma),
      normalised_(normalised) {
  if (targets_.rows() != x_->rows())
    throw std::invalid_argument("token alignment: targets and tokens differ in number of rows");
}

void TokenAlignmentPotential::features(const Eigen::MatrixXd& particles) const {
  const Eigen::MatrixXd& x = *x_;
  const bool shift = normalised_ && map_.kind() == FeatureMapKind::favor;
  map_.forward(x, particles, z_, phi_, shift ? &shift_ : nullptr);
  const double n = static_cast<double>(x.rows());
  if (normalised_) {
    scale_ = phi_.rowwise().mean();  // s_a = (1/m) Σ_l φ_l(x_a)
    normalised_phi_ = phi_.array().colwise() / scale_.array();
    moments_.noalias() = normalised_phi_.transpose() * targets_;
  } else {
    moments_.noalias() = phi_.transpose() * targets_;
  }
  moments_ /= n;  // m = Φ̃ᵀ T / n  (m, C)
}

double TokenAlignmentPotential::alignment(const Eigen::MatrixXd& particles) const {
  features(particles);
  return moments_.squaredNorm() / static_cast<double>(particles.rows());
}

void TokenAlignmentPotential::evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                                       Eigen::MatrixXd* gradient) const {
  features(particles);
  const double n = static_cast<double>(x_->rows());
  if (value.size() != particles.rows()) value.resize(particles.rows());
  value = -gamma_ * moments_.rowwise().squaredNorm();
  if (!gradient) return;
  // ∂U/∂Φ̃ = −(2γ/n) T mᵀ  (n, m)
  d_phi_.noalias() = targets_ * moments_.transpose();
  d_phi_ *= -2.0 * gamma_ / n;
  if (normalised_) {
    // Φ̃_ak = Φ_ak / s_a, s_a = (1/m) Σ_l Φ_al:
    // ∂U/∂Φ_al = (G̃_al − (1/m) Σ_k G̃_ak Φ̃_ak) / s_a.
    const Eigen::VectorXd inner = d_phi_.cwiseProduct(normalised_phi_).rowwise().mean();
    d_phi_.colwise() -= inner;
    d_phi_.array().colwise() /= scale_.array();
  }
  map_.backward(*x_, particles, z_, phi_, d_phi_, work_, *gradient);
}

std::string TokenAlignmentPotential::describe() const {
  std::ostringstream o;
  o << "token alignment gamma=" << gamma_ << " map=" << map_.describe()
    << (normalised_ ? " normalised" : "");
  return o.str();
}

}  // namespace cpm
