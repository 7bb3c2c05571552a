#pragma once
// Phase A of the attention protocol (docs/model.md §2): for each layer and head, the head's
// particles run projected Langevin dynamics on the alignment Hamiltonian of labelled training
// sequences, with Riesz repulsion:
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
// which is physics/alignment.hpp's AlignmentPotential on the token set with targets T'
// (experiments/attention/token_alignment.hpp evaluates it, with the per-token normalisation).
// Layers are processed in order, each with the keys produced by the already-updated layers below.
//
// Options (config/train_config.hpp, PhaseAConfig): the token set can be the heads' queries and
// keys (queries_and_keys; each source weighted by 1/2), the features normalised per token
// (normalised; experiments/attention/token_alignment.hpp), a stop rule on the relative change of
// the alignment (tolerance, check_every, with dynamics.steps as the cap), and λ set so that the
// repulsion drift is a stated fraction of the alignment drift at the start (repulsion_fraction).
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "core/domain.hpp"
#include "experiments/attention/attention_data.hpp"
#include "experiments/attention/token_alignment.hpp"
#include "physics/external_potential.hpp"
#include "physics/random_feature_maps.hpp"
#include "solvers/interaction_sum.hpp"
#include "transformer/key_normalisation.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {

struct HeadAlignment {
  int layer = 0, head = 0;
  double before = 0.0, after = 0.0;  // A(Ω) on the Phase A tokens (normalised φ if asked)
  double gamma = 0.0;                // γ_eff, the γ of V_align actually used
  double lambda = 0.0;               // λ of the repulsion actually used
  // RMS repulsion drift / RMS alignment drift, at the initial and at the final particles.
  double repulsion_ratio_start = 0.0, repulsion_ratio_end = 0.0;
  int steps = 0;              // Langevin steps taken
  bool converged = false;     // stopped by the tolerance rule (false: at the step cap)
  double norm = 0.0;          // RMS ‖ω_k‖ of the particles before Phase A
  double displacement = 0.0;  // RMS ‖ω_k(after) − ω_k(before)‖
  // Best linear fit Ω₁ ≈ Ω₀A (least squares over the d_head × d_head matrix A): the part of Phase
  // A's change that re-mixing W_Q, W_K cannot reproduce (linear_fit_residual).
  double fit_residual = 0.0;  // ‖Ω₀A − Ω₁‖_F / ‖Ω₁‖_F
  double unabsorbed = 0.0;  // ‖Ω₀A − Ω₁‖_F / ‖Ω₁ − Ω₀‖_F (0 when Ω₁ = Ω₀)
  double seconds = 0.0;  // wall time of this head's dynamics
};

// RMS drift of `potential` and RMS repulsion drift per unit λ, (1/N) Σ_l ∇W(ω_k − ω_l), at the
// particles x (0 without pairs): what fixes γ_eff and λ from relative settings.
struct PhaseADrifts {
  double alignment = 0.0, repulsion_per_lambda = 0.0;
};
PhaseADrifts phase_a_drifts(const ExternalPotential& potential, InteractionSum* pairs,
                            const Eigen::MatrixXd& x);

struct LinearFitResidual {
  double relative = 0.0;  // ‖Ω₀A − Ω₁‖_F / ‖Ω₁‖_F
  double of_change = 0.0;  // ‖Ω₀A − Ω₁‖_F / ‖Ω₁ − Ω₀‖_F, 0 when the change vanishes
};
// A = argmin_A ‖Ω₀A − Ω₁‖_F for particles Ω₀, Ω₁ (m, d) (rows are particles): a linear map of the
// particles is a linear map of the projected tokens, ω₁ᵀx = ω₀ᵀ(Ax), which Phase B can absorb
// into W_Q and W_K (exactly for softplus and softmaxfeat, up to a per-token factor for favor).
// With m ≤ d linearly independent particles every Ω₁ is such a map and the residual is 0: the
// diagnostic says something only for m > d (m = 64, d_head = 16 in the examples).
LinearFitResidual linear_fit_residual(const Eigen::MatrixXd& before, const Eigen::MatrixXd& after);

// The per-token targets of Phase A: the targets T_i of sequence i (a row of sequence_targets,
// already centred if asked) spread over its lengths[i] tokens as T_i n_tok / (n |S_i|), the token
// rows of the sequences in order; with `both` the rows are repeated below for the queries, each
// half then weighing 1/2.
Eigen::MatrixXd spread_token_targets(const Eigen::MatrixXd& sequence_targets,
                                     const std::vector<std::size_t>& lengths, bool both);

// Phase A's domain D for particles in R^d: the ball of `radius` (absent: 2√d, twice the norm of a
// standard Gaussian feature, so that the alignment cannot drive particles away; 0: the whole
// space).
Domain phase_a_domain(const std::optional<double>& radius, int d);

// How Phase A normalises each token's features: the attention's own key normalisation (`keys`,
// [model] normalise_keys: the features it reads) or else [phase_a] normalised (the mean).
// Throws std::invalid_argument when both are asked.
TokenNormalisation phase_a_token_normalisation(bool normalised, KeyNormalisation keys);
// One head's Phase A: the particles omega (m, d_head) move in place on the alignment potential of
// the token rows x (already scaled by the feature input scale) with per-row targets, with the
// repulsion, γ_eff, λ and stop rule of `config`; `replica` keys this head's Langevin noise. With
// normalised keys (`keys`), every token row's features are normalised as the attention normalises
// a key's (a query's scale cancels in the read-out, so its rows may be normalised alike).
// after_step(step) runs after every step (progress, a pending Ctrl-C).
HeadAlignment align_head_tokens(Eigen::MatrixXd& omega, std::shared_ptr<const Eigen::MatrixXd> x,
                                const Eigen::MatrixXd& token_targets, const FeatureMap& map,
                                KeyNormalisation keys, const PhaseAConfig& config,
                                std::uint64_t seed, std::uint64_t replica,
                                const std::function<void(int)>& after_step = {});

// Updates model.particles() in place, head by head (replica l · heads + h of `seed`). `seed` keys
// the sequence subset and the Langevin noise. With a tokens_file, every head's queries, keys and
// particles before and after are written there (io/phase_a_tokens_file.hpp).
std::vector<HeadAlignment> run_phase_a(TransformerClassifier<float>& model,
                                       const SequenceSet& train, int classes,
                                       const PhaseAConfig& config, std::uint64_t seed,
                                       int batch_size, bool progress,
                                       const std::string& tokens_file = "");

}  // namespace cpm
