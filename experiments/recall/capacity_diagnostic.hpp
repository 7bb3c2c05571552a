#pragma once
// Why an arm holds S keys or not (docs/model.md §2, "Capacity diagnostic"): measured on a trained
// network's own keys and queries, one sequence at a time, from the Gram matrix of its key features
// G_ij = φ(k_i)ᵀφ(k_j) and its weights w_j = φ(q)ᵀφ(k_j) (for softmax attention the exact kernel,
// G_ij = exp(k_iᵀk_j/√d) and w_j = exp(qᵀk_j/√d)). Both are passed as logarithms, so that softmax's
// kernel does not overflow.
//   margin          (w_own − max_{j≠own} w_j) / max(w_own, max_{j≠own} w_j) ∈ [−1, 1]: the query's
//                   own key against the strongest other key; > 0 when the own key wins
//   norm spread     log10(max_i ‖φ(k_i)‖ / min_i ‖φ(k_i)‖): a few long features dominate every
//                   weight when it is large
//   norm CV         the coefficient of variation std/mean of ‖φ(k_i)‖ over the sequence: 0 when
//                   every key's features have one length (keys normalised)
//   temperature     ‖x_q‖ ‖x_own‖, x the input of φ (τ q, τ k for the retrieval model): the scale
//                   of the query's logit against its own key, qᵀk = ‖q‖‖k‖ cos; for softmax
//                   attention ‖q‖ ‖k_own‖ / √d
//   coherence       |cos(φ(k_i), φ(k_j))|, i ≠ j: the mean, and the largest of the sequence
//   effective rank  exp(−Σ p_i log p_i), p = σ / Σσ, σ the singular values of [φ(k_1) … φ(k_S)]
//                   (Roy & Vetterli 2007): S for orthogonal features of equal length, 1 for one
//                   direction
// The diagnostic is the mean of each over the sequences (the share of positive margins too).
#include <Eigen/Dense>

namespace cpm {

struct CapacityDiagnostic {
  double margin = 0.0, own_key_wins = 0.0;  // mean relative margin; share of margins > 0
  double norm_spread = 0.0;                 // mean log10(max ‖φ(k)‖ / min ‖φ(k)‖)
  double norm_cv = 0.0;                     // mean std/mean of ‖φ(k)‖
  double effective_temperature = 0.0;       // mean ‖x_q‖ ‖x_own‖
  double coherence_mean = 0.0, coherence_max = 0.0;
  double effective_rank = 0.0;
  int sequences = 0;
};

class CapacityMeter {
 public:
  // log_gram (S, S) = log G; log_weights (S) = log w up to a common constant; own: the query's
  // key; temperature: ‖x_q‖ ‖x_own‖.
  void add(const Eigen::MatrixXd& log_gram, const Eigen::VectorXd& log_weights, int own,
           double temperature);
  CapacityDiagnostic result() const;

 private:
  CapacityDiagnostic sum_;
};

}  // namespace cpm
