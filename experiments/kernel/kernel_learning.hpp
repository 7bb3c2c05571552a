#pragma once
// The building blocks of kernel learning with Coulomb particles (docs/model.md §1–2):
//  * learn_particles: projected Langevin dynamics of N particles on the energy
//        E_N(Ω) = −γ A(Ω) + (λ / (2N²)) Σ_{k≠l} W(ω_k − ω_l),
//    i.e. the alignment potential V_align as the external field plus Riesz repulsion, with
//    diversity diagnostics (alignment, minimum and mean pairwise distance) along the way;
//  * importance-sampled features (Sinha & Duchi, "Learning kernels with random features",
//    NeurIPS 2016): a pool of M candidates from the base law is reweighted by
//        q = argmax_q Σ_j q_j s_j   subject to   D_χ²(q ‖ 1/M) = (1/M) Σ_j (M q_j − 1)² ≤ ρ,
//    s_j = ‖m(ω_j)‖² the candidate's alignment score, and N features are drawn from q.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "physics/alignment.hpp"
#include "physics/random_feature_maps.hpp"

namespace cpm {

struct LearningSettings {
  // γ, centring, mini-batch, objective. alignment.anchor_precision is set from `anchor` below.
  AlignmentSettings alignment;
  // γ in units of the initial alignment drift: γ_eff = γ / g₀, g₀ the RMS over particles of
  // |∇_{ω_k} (−N J)| at the initial particles, so the first alignment drift has RMS size γ.
  bool relative_gamma = false;
  // The prior anchor V₀(ω) = |ω|²/(2σ²β), σ = prior_scale (docs/model.md §1); none at β = ∞.
  bool anchor = false;
  double prior_scale = 1.0;
  InteractionConfig repulsion{.kernel = InteractionKernel::power(1.0)};  // λ = 0: none
  // ≥ 0: λ chosen so that the RMS repulsive drift at the initial particles is this fraction of
  // the RMS alignment drift there (repulsion.lambda ignored); < 0: repulsion.lambda as given.
  double drift_fraction = -1.0;
  DynamicsConfig dynamics{.step = 0.05, .steps = 200};      // η, β, steps
  double radius = std::numeric_limits<double>::infinity();  // D: ball about 0, or R^d
  int record_every = 10;
  std::uint64_t seed = 1;        // Langevin noise
  std::string source;            // the configuration, for error messages
  std::vector<int> checkpoints;  // steps at which on_checkpoint receives the particles
};

// What a run used and measured: γ_eff, λ and the drift ratios (RMS over particles of the
// repulsive, resp. anchor, drift over the RMS alignment drift).
struct LearningReport {
  double gamma = 0.0;             // γ_eff
  double alignment_drift = 0.0;   // RMS alignment drift at the initial particles
  double anchor_precision = 0.0;  // c = 1/(σ²β), 0 without anchor
  double lambda = 0.0;
  double repulsion_ratio_initial = 0.0, repulsion_ratio_final = 0.0;
  double anchor_ratio_initial = 0.0;
};

struct PairwiseDistanceSummary {
  double min = 0.0, mean = 0.0;  // over pairs k < l
};
PairwiseDistanceSummary pairwise_distances(const Eigen::MatrixXd& particles);

struct TrainingRecord {
  int step = 0;
  double alignment = 0.0;  // A(Ω) on the whole training set (targets centred if configured)
  PairwiseDistanceSummary distances;
};

// Runs the dynamics from `initial` (N, d) and returns the learned particles. x (n, d) are the
// training inputs and targets (n, C) their alignment targets (uncentred; see alignment.hpp).
// If trace is non-null it receives a record at step 0, every record_every steps and at the end;
// on_record, if set, is called with each record (progress reporting). Throws StopRequested with
// an empty hint at the next step once a stop signal arrived (core/stop_request.hpp).
Eigen::MatrixXd learn_particles(
    std::shared_ptr<const Eigen::MatrixXd> x, const Eigen::MatrixXd& targets, const FeatureMap& map,
    Eigen::MatrixXd initial, const LearningSettings& settings,
    std::vector<TrainingRecord>* trace = nullptr,
    const std::function<void(const TrainingRecord&)>& on_record = {},
    LearningReport* report = nullptr,
    const std::function<void(int, const Eigen::MatrixXd&)>& on_checkpoint = {});

// The χ²-constrained reweighting of the candidates' scores: q_j = max(0, (1 + (s_j − t)/κ)/M)
// with t normalising q and κ chosen by bisection so that D_χ²(q ‖ 1/M) = ρ (or the
// unconstrained optimum, if that is within ρ). ρ = 0 gives the uniform weights.
Eigen::VectorXd importance_weights(const Eigen::VectorXd& scores, double rho);

// (1/M) Σ_j (M q_j − 1)².
double chi_square_divergence_from_uniform(const Eigen::VectorXd& q);

// Draws `count` indices i.i.d. from the probability vector q (stream keyed by seed).
std::vector<Eigen::Index> sample_indices(const Eigen::VectorXd& q, Eigen::Index count,
                                         std::uint64_t seed);

}  // namespace cpm
