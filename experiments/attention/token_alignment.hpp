#pragma once
// The alignment potential of Phase A on a weighted token set (docs/model.md §2), with an option
// that physics/alignment.hpp does not have: features normalised per token, φ̃(x) = φ(x) / s(x),
//   mean: s = (1/m) Σ_l φ_l(x)  ([phase_a] normalised: the scale of a token's feature vector,
//         which linear attention's normalisation discards for a query, does not count),
//   l1:   s = Σ_l |φ_l(x)| = ‖φ(x)‖₁,   l2: s = ‖φ(x)‖₂  (the keys the attention reads when
//         [model] normalise_keys is "l1" or "l2": transformer/key_normalisation.hpp).
// Then
//   m_k = (1/n) Σ_a T_a φ̃_k(x_a),   A(Ω) = (1/m) Σ_k ‖m_k‖²,   V_k = −γ ‖m_k‖²,
// and, because the normaliser couples the particles (as softmaxfeat's does), evaluate() returns in
// row k the partial derivative ∂/∂ω_k of U = Σ_l V_l. Without normalisation this is
// physics/alignment.hpp's AlignmentPotential without mini-batches (tested against it).
// favor is evaluated with a per-token max-shift when normalised: the shift cancels in φ̃.
#include <Eigen/Dense>
#include <memory>
#include <string>

#include "physics/external_potential.hpp"
#include "physics/random_feature_maps.hpp"

namespace cpm {

enum class TokenNormalisation { none, mean, l1, l2 };

class TokenAlignmentPotential final : public ExternalPotential {
 public:
  // x (n, d) token vectors, targets (n, C) per-token targets (already weighted and centred).
  TokenAlignmentPotential(std::shared_ptr<const Eigen::MatrixXd> x, Eigen::MatrixXd targets,
                          FeatureMap map, double gamma,
                          TokenNormalisation normalisation = TokenNormalisation::none);

  void evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

  // A(Ω) = (1/m) Σ_k ‖m_k‖² (independent of γ).
  double alignment(const Eigen::MatrixXd& particles) const;
  double gamma() const { return gamma_; }
  void set_gamma(double gamma) { gamma_ = gamma; }

 private:
  // φ (or φ̃) into phi_, pre-activations into z_, per-token normalisers s_a into scale_.
  void features(const Eigen::MatrixXd& particles) const;

  std::shared_ptr<const Eigen::MatrixXd> x_;
  Eigen::MatrixXd targets_;
  FeatureMap map_;
  double gamma_;
  TokenNormalisation normalisation_;
  mutable Eigen::MatrixXd z_, phi_, normalised_phi_, moments_, d_phi_, work_;
  mutable Eigen::VectorXd shift_, scale_;
};

}  // namespace cpm
