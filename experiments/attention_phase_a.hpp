#pragma once
// Phase A of the attention protocol (DESIGN §2): for each layer and head, the head's particles
// run projected Langevin dynamics on the alignment Hamiltonian of labelled training sequences,
// with Riesz repulsion:
//   ψ(S; ω) = mean_{a∈S} φ(x_a; ω),  x_a = d_head^{-1/4} W_K-projected token a (the attention's
//   own feature input),  m(ω) = (1/n) Σ_i T_i ψ(S_i; ω),  V_align(ω) = −γ ‖m(ω)‖².
// Because ψ is a mean over tokens, m is a weighted sum over all tokens of the n sequences:
//   m(ω) = (1/n_tok) Σ_a T'_a φ(x_a; ω),  T'_a = T_i n_tok / (n |S_i|) for a ∈ S_i,
// which is exactly physics/alignment.hpp's AlignmentPotential on the token set with targets T'.
// Layers are processed in order, each with the keys produced by the already-updated layers below.
#include <vector>

#include "experiments/attention_data.hpp"
#include "io/train_config.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

struct HeadAlignment {
  int layer = 0, head = 0;
  double before = 0.0, after = 0.0;  // A(Ω) on the Phase A sequences
};

// Updates model.particles() in place. `seed` keys the sequence subset and the Langevin noise.
std::vector<HeadAlignment> run_phase_a(TransformerClassifier<float>& model,
                                       const SequenceSet& train, int classes,
                                       const PhaseAConfig& config, std::uint64_t seed,
                                       int batch_size, bool progress);

}  // namespace cpm
