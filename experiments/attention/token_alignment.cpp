#include "experiments/attention/token_alignment.hpp"

#include <sstream>
#include <stdexcept>

namespace cpm {

TokenAlignmentPotential::TokenAlignmentPotential(std::shared_ptr<const Eigen::MatrixXd> x,
                                                 Eigen::MatrixXd targets, FeatureMap map,
                                                 double gamma, TokenNormalisation normalisation)
    : x_(std::move(x)),
      targets_(std::move(targets)),
      map_(std::move(map)),
      gamma_(gamma),
      normalisation_(normalisation) {
  if (targets_.rows() != x_->rows())
    throw std::invalid_argument("token alignment: targets and tokens differ in number of rows");
}

void TokenAlignmentPotential::features(const Eigen::MatrixXd& particles) const {
  const Eigen::MatrixXd& x = *x_;
  const bool normalised = normalisation_ != TokenNormalisation::none;
  const bool shift = normalised && map_.kind() == FeatureMapKind::favor;
  map_.forward(x, particles, z_, phi_, shift ? &shift_ : nullptr);
  const double n = static_cast<double>(x.rows());
  if (normalised) {
    switch (normalisation_) {
      case TokenNormalisation::mean:
        scale_ = phi_.rowwise().mean();
        break;
      case TokenNormalisation::l1:
        scale_ = phi_.cwiseAbs().rowwise().sum();
        break;
      default:
        scale_ = phi_.rowwise().norm();
        break;
    }
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
  if (normalisation_ != TokenNormalisation::none) {
    // Φ̃_ak = Φ_ak / s_a, with c_a = Σ_k G̃_ak Φ̃_ak:
    //   mean (s_a = (1/m) Σ_l Φ_al):  ∂U/∂Φ_al = (G̃_al − c_a / m) / s_a,
    //   l1 (s_a = Σ_l |Φ_al|):         ∂U/∂Φ_al = (G̃_al − c_a sign Φ_al) / s_a,
    //   l2 (s_a = ‖Φ_a‖₂):             ∂U/∂Φ_al = (G̃_al − c_a Φ̃_al) / s_a.
    const Eigen::VectorXd inner = d_phi_.cwiseProduct(normalised_phi_).rowwise().sum();
    switch (normalisation_) {
      case TokenNormalisation::mean:
        d_phi_.colwise() -= inner / static_cast<double>(phi_.cols());
        break;
      case TokenNormalisation::l1:
        d_phi_ -= (phi_.array().sign().colwise() * inner.array()).matrix();
        break;
      default:
        d_phi_ -= (normalised_phi_.array().colwise() * inner.array()).matrix();
        break;
    }
    d_phi_.array().colwise() /= scale_.array();
  }
  map_.backward(*x_, particles, z_, phi_, d_phi_, work_, *gradient);
}

std::string TokenAlignmentPotential::describe() const {
  std::ostringstream o;
  static const char* const names[] = {"", " normalised", " l1-normalised", " l2-normalised"};
  o << "token alignment gamma=" << gamma_ << " map=" << map_.describe()
    << names[static_cast<int>(normalisation_)];
  return o.str();
}

}  // namespace cpm
