#pragma once
// Phase A of the attention protocol (docs/model.md §2): for each layer and head, the head's particles
// run projected Langevin dynamics on the alignment Hamiltonian of labelled training sequences,
// with Riesz repulsion:
//   ψ(S; ω) = mean_{a∈S} φ(x_a; ω),  x_a = d_head^{-1/4} W_K-projected token a (the attention's
//   own feature input),  m(ω) = (1/n) Σ_i T_i ψ(S_i; ω),  V_align(ω) = −γ_eff ‖m(ω)‖².
// The keys at initialisation are small (W_K ~ N(0, 0.02²)), and ∇_ω‖m‖² scales like their square,
// so a fixed γ gives a drift that depends on the key scale rather than on the task. With
// relative_gamma (the default) γ is measured in units of the initial alignment force,
//   γ_eff = γ / g_0,   g_0 = ( (1/m) Σ_k ‖∇_ω ‖m(ω_k⁰)‖²‖² )^{1/2},
// so the alignment drift of the initial particles has RMS magnitude exactly γ whatever the scale of
// the keys, and Phase A moves a particle by about η·steps·γ at first (relative to its norm
// ≈ √d_head and to the repulsion drift of order λ). relative_gamma = false uses γ_eff = γ.
// Because ψ is a mean over tokens, m is a weighted sum over all tokens of the n sequences:
//   m(ω) = (1/n_tok) Σ_a T'_a φ(x_a; ω),  T'_a = T_i n_tok / (n |S_i|) for a ∈ S_i,
// which is exactly physics/alignment.hpp's AlignmentPotential on the token set with targets T'.
// Layers are processed in order, each with the keys produced by the already-updated layers below.
#include <vector>

#include "experiments/attention/attention_data.hpp"
#include "config/train_config.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

struct HeadAlignment {
  int layer = 0, head = 0;
  double before = 0.0, after = 0.0;  // A(Ω) on the Phase A sequences
  double gamma = 0.0;                // γ_eff, the γ of V_align actually used
  double norm = 0.0;                 // RMS ‖ω_k‖ of the particles before Phase A
  double displacement = 0.0;         // RMS ‖ω_k(after) − ω_k(before)‖
};

// Updates model.particles() in place. `seed` keys the sequence subset and the Langevin noise.
std::vector<HeadAlignment> run_phase_a(TransformerClassifier<float>& model,
                                       const SequenceSet& train, int classes,
                                       const PhaseAConfig& config, std::uint64_t seed,
                                       int batch_size, bool progress);

}  // namespace cpm
