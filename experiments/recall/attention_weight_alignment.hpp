#pragma once
// Phase A's potential for the recall tasks (docs/model.md §2, "Phase A for the recall tasks").
// Query vectors x_a each attend to a contiguous range of key vectors y_i with target weights p_ai
// (Σ_i p_ai = 1 over the range). favor's kernel with particle rows ω_k,
//   κ_Ω(x, y) = Σ_k exp(ω_kᵀu − |x|²/2 − |y|²/2),   u = x + y,
// gives linear attention's weights â_ai = κ_ai / Σ_j κ_aj (ε and the factor 1/D_φ do not change
// them). The potential is the mean cross-entropy of the linear weights against the target,
//   U(Ω) = γ (1/n_q) Σ_a Σ_i p_ai (−log â_ai),
//   ∂U/∂ω_k = (γ/n_q) Σ_a Σ_i (â_ai − p_ai) r_k,ai u_ai,   r_k,ai = softmax_k(ω_kᵀu_ai),
// which couples the particles through κ (row k of the gradient is ∂U/∂ω_k; each particle's value
// is U/m). Everything is evaluated through log-sum-exps, so no exponential overflows.
// Because ω_kᵀu_ai = ω_kᵀx_a + ω_kᵀy_i, the scores are the sums of two products XΩᵀ and YΩᵀ, and
// the gradient Σ_pairs R u_ai = Σ_a (Σ_i R_ai) x_a + Σ_i (Σ_a R_ai) y_i (R_ai the row of
// (â − p) r_k,ai): per pair the work is O(m), not O(m d).
// U/γ − H(p) = mean KL(p ‖ â) ≥ 0 is what alignment() reports: 0 when φ reproduces the targets.
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "physics/external_potential.hpp"
#include "transformer/key_normalisation.hpp"

namespace cpm {

// Query a sees key rows [key_begin[a], key_end[a]); its targets are target[pair] for the pairs
// pair_begin[a] … pair_begin[a] + (key_end[a] − key_begin[a]) − 1, in key order.
struct AttentionTargets {
  Eigen::MatrixXd queries;  // (n_q, d)
  Eigen::MatrixXd keys;     // (n_k, d)
  std::vector<Eigen::Index> key_begin, key_end;
  Eigen::VectorXd target;  // (pairs)
  Eigen::Index pairs() const { return target.size(); }
};

// Target weights of query a: softmax_i(c x_aᵀy_i); c = 1 is the exact kernel exp(xᵀy) that favor
// estimates, another c the softmax of a network whose logits are c times those inner products.
void set_softmax_targets(AttentionTargets& t, double temperature = 1.0);

class AttentionWeightPotential final : public ExternalPotential {
 public:
  // keys: the linear weights read normalised key features, κ̃_ai = κ_ai / ‖φ(y_i)‖
  // (transformer/key_normalisation.hpp), the kernel of attention with normalise_keys.
  AttentionWeightPotential(AttentionTargets targets, double gamma,
                           KeyNormalisation keys = KeyNormalisation::none);

  void evaluate(const Eigen::MatrixXd& particles, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

  // Mean KL(p ‖ â) over the queries (independent of γ).
  double alignment(const Eigen::MatrixXd& particles) const;
  double gamma() const { return gamma_; }
  void set_gamma(double gamma) { gamma_ = gamma; }

 private:
  // U/γ at `particles`; with a gradient, adds ∂(U/γ)/∂Ω into it (zeroed first).
  double cross_entropy(const Eigen::MatrixXd& particles, Eigen::MatrixXd* gradient) const;

  // Queries [first_query_[b], first_query_[b + 1]) form block b, seeing keys [key_lo_[b],
  // key_hi_[b]): a fixed partition, so that sums over blocks do not depend on the threads.
  struct Block {
    Eigen::Index first_query, end_query, key_lo, key_hi;
  };

  AttentionTargets t_;
  Eigen::VectorXd query_offset_, key_offset_;  // −|x_a|²/2, −|y_i|²/2
  std::vector<Eigen::Index> first_pair_;
  std::vector<Block> blocks_;
  double target_entropy_ = 0.0;  // mean H(p_a)
  double gamma_;
  KeyNormalisation keys_;
  mutable Eigen::VectorXd key_log_norm_, key_pair_weights_;  // log ‖φ(y_i)‖, W_i
  using Rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  mutable Rows query_scores_, key_scores_;  // XΩᵀ (n_q, m), YΩᵀ (n_k, m)
  mutable Eigen::VectorXd log_kernel_, weights_;
  mutable Rows query_weights_;             // Σ_i R_ai (n_q, m)
  mutable std::vector<Rows> key_weights_;  // per block, Σ_a R_ai over its key range
  mutable Rows key_total_;                 // Σ_a R_ai (n_k, m)
};

}  // namespace cpm
