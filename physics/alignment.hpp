#pragma once
// Kernel–target alignment and the alignment potential (docs/model.md §1).
//
//   learned kernel   K_Ω(x, x') = (1/N) Σ_k φ(x; ω_k) φ(x'; ω_k)
//   alignment        A(Ω) = (1/n²) Σ_c Σ_{i,j} T_ic T_jc K_Ω(x_i, x_j) = (1/N) Σ_k ‖m(ω_k)‖²,
//                    m_c(ω) = (1/n) Σ_i T_ic φ(x_i; ω)
//   potential        V_align(ω) = −γ ‖m(ω)‖²,   so (1/N) Σ_k V_align(ω_k) = −γ A(Ω).
//
// Objectives (AlignmentObjective; the energy is −γ N J(Ω) in every case, i.e. the external
// energy per particle is −γ J):
//   alignment     J = A(Ω), one-body: linear in the particles' empirical measure
//   normalised    J = ⟨K, TTᵀ⟩_F / (‖K‖_F ‖TTᵀ‖_F) = ‖M‖²_F / (‖G‖_F τ), invariant under K → cK
//   squared_loss  J = A − ‖G‖²_F / (2αN²), from (1/n²) Σ_ij (α (TTᵀ)_ij − K_ij)² = α²τ² − 2α J
// with M = ΦᵀT/n (the moments), G = ΦᵀΦ/n (the features' Gram matrix) and τ = ‖TᵀT‖_F/n. The
// squared loss's two-body term (1/N²) Σ_kl G_kl² penalises redundant (correlated) features.
// The prior anchor V₀(ω) = c|ω|²/2 (c = 1/(σ²β); docs/model.md §1) is added to every variant.
//
// Targets T (n, C): for two classes one column of ±1 labels (target kernel yyᵀ); for C > 2
// classes one-hot rows (target kernel YYᵀ). The centred variant subtracts the column means of T
// over the data (or the mini-batch); since the centring matrix H is idempotent this equals the
// alignment of the centred kernel HKH (Cortes et al., 2012).
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "physics/external_potential.hpp"
#include "physics/random_feature_maps.hpp"

namespace cpm {

// Targets from class labels in 0..classes−1: (n, 1) with ±1 (label 1 → +1) when classes = 2,
// one-hot (n, classes) otherwise.
Eigen::MatrixXd alignment_targets(const Eigen::VectorXi& labels, int classes);
// Subtracts the column means.
void centre_targets(Eigen::MatrixXd& targets);

// K_Ω between two data sets: (na, nb).
Eigen::MatrixXd empirical_kernel(const FeatureMap& map, const Eigen::MatrixXd& xa,
                                 const Eigen::MatrixXd& xb, const Eigen::MatrixXd& particles);

// m (F, C), m(f, c) = (1/n) Σ_i T_ic Φ(x_i, f) for the F = N·features_per_particle feature
// columns (row k is particle k; for cos/sin pairs rows k and N + k); data processed in row blocks
// so that memory stays O(block · F).
Eigen::MatrixXd alignment_moments(const FeatureMap& map, const Eigen::MatrixXd& x,
                                  const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles);

// The per-particle scores ‖m(ω_k)‖² (summed over a particle's feature columns), (N).
Eigen::VectorXd particle_scores(const FeatureMap& map, const Eigen::MatrixXd& x,
                                const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles);

// A(Ω) = (1/N) Σ_k ‖m(ω_k)‖², O(n N d).
double alignment(const FeatureMap& map, const Eigen::MatrixXd& x, const Eigen::MatrixXd& targets,
                 const Eigen::MatrixXd& particles);

// The same by its definition, (1/n²) Σ_c Σ_{i,j} T_ic T_jc K_Ω(x_i, x_j), O(n² N): the
// reference for tests.
double alignment_double_sum(const FeatureMap& map, const Eigen::MatrixXd& x,
                            const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles);

enum class AlignmentObjective { alignment, normalised, squared_loss };
// The configuration names: "alignment", "normalised", "squared_loss".
const std::vector<std::string>& alignment_objective_names();
AlignmentObjective alignment_objective_kind(const std::string& name);

// J(Ω) of the objective on (x, T) (targets as given: centre them first for the centred variant),
// O(n F²) for the normalised and squared-loss forms.
double alignment_objective(const FeatureMap& map, const Eigen::MatrixXd& x,
                           const Eigen::MatrixXd& targets, const Eigen::MatrixXd& particles,
                           AlignmentObjective objective, double alpha = 1.0);

struct AlignmentSettings {
  double gamma = 1.0;           // γ
  bool centred = false;         // centre T over the data or the mini-batch
  Eigen::Index batch_size = 0;  // 0: the whole data set
  std::uint64_t seed = 1;       // mini-batch order
  AlignmentObjective objective = AlignmentObjective::alignment;
  double alpha = 1.0;             // squared loss: the target kernel's scale α
  double anchor_precision = 0.0;  // c of the prior anchor c|ω|²/2: 1/(σ²β); 0 for none
};

// V_align (+ the anchor) as an ExternalPotential. evaluate() returns V(ω_k) in value(k) and in
// row k of the gradient ∂/∂ω_k Σ_l V(ω_l): for the one-body alignment of a separable map this
// is ∇V_align(ω_k); for softmaxfeat, whose features are coupled through their normaliser, and
// for the normalised and squared-loss objectives, which couple the particles, it is the partial
// derivative of the total −γ N J(Ω) + Σ_l c|ω_l|²/2, so the drift stays N ∇_{ω_k} E_N. Values:
// −γ‖m_k‖² (alignment), −γ J (normalised), −γ(‖m_k‖² − Σ_{f∈k} Σ_g G_fg²/(2αN)) (squared
// loss), each plus c|ω_k|²/2; they sum to the total.
//
// Mini-batches: select_batch(step) picks the batch of a training step (epochs of a random
// permutation keyed by (seed, epoch)); evaluate() uses the selected batch. Not thread-safe: the
// work buffers are reused across calls.
class AlignmentPotential final : public ExternalPotential {
 public:
  AlignmentPotential(std::shared_ptr<const Eigen::MatrixXd> x, Eigen::MatrixXd targets,
                     FeatureMap map, AlignmentSettings settings);

  void select_batch(std::uint64_t step);
  void set_gamma(double gamma) { settings_.gamma = gamma; }
  void set_anchor_precision(double c) { settings_.anchor_precision = c; }
  void evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

  const FeatureMap& map() const { return map_; }
  const AlignmentSettings& settings() const { return settings_; }
  Eigen::Index batch_rows() const { return current_x_->rows(); }
  // Rows of the data in the current mini-batch (empty when the whole data set is used).
  const std::vector<Eigen::Index>& batch_indices() const { return batch_indices_; }

 private:
  void epoch_permutation(std::uint64_t epoch);

  std::shared_ptr<const Eigen::MatrixXd> x_;
  Eigen::MatrixXd targets_;  // uncentred, (n, C)
  FeatureMap map_;
  AlignmentSettings settings_;
  std::vector<Eigen::Index> permutation_, batch_indices_;
  std::uint64_t permutation_epoch_ = ~std::uint64_t{0};
  Eigen::MatrixXd batch_x_, batch_targets_;  // rows of the current mini-batch; targets centred
  const Eigen::MatrixXd* current_x_;         // x_ itself, or batch_x_
  mutable Eigen::MatrixXd z_, phi_, moments_, d_phi_, work_, gram_;
};

}  // namespace cpm
