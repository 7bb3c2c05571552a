#pragma once
// Phase A of the kernel- arms of the recall study (docs/model.md §2, "Phase A for the recall
// tasks"): one head's particles run projected dynamics (config.dynamics, on the ball D) on the
// attention-weight potential of experiments/recall/attention_weight_alignment.hpp plus Riesz
// repulsion. As in the classification Phase A, γ and λ are relative: γ_eff = γ / g_0 makes the
// RMS alignment drift of the initial particles equal to γ, and λ makes the repulsion drift
// repulsion_fraction of it.
#include <cstdint>
#include <functional>
#include <string>

#include "config/recall_config.hpp"
#include "experiments/recall/attention_weight_alignment.hpp"

namespace cpm {

struct RecallHeadAlignment {
  int layer = 0, head = 0;
  double before = 0.0, after = 0.0;     // mean KL(p ‖ â) before and after
  double gamma = 0.0, lambda = 0.0;     // γ_eff and λ used
  double norm = 0.0, norm_after = 0.0;  // RMS ‖ω_k‖ before and after
  double displacement = 0.0;            // RMS ‖ω_k(after) − ω_k(before)‖
  int iterations = 0;                   // minimiser iterations, or Langevin steps
  bool converged = false;               // the minimiser met dynamics.tolerance
  double seconds = 0.0;
};

// Moves the particles omega (rows, d) in place. `replica` keys the noise of this head (finite β
// only); `keys`: the attention's key normalisation, which the weights then read.
// between_steps() runs after every step or minimiser iteration (a pending Ctrl-C).
RecallHeadAlignment align_head_particles(Eigen::MatrixXd& omega, AttentionTargets targets,
                                         const RecallPhaseAConfig& config, std::uint64_t seed,
                                         std::uint64_t replica, const std::string& source,
                                         KeyNormalisation keys,
                                         const std::function<void()>& between_steps = {});
// The same for the particle block `omega` ((rows, d) row-major floats) of a model.
RecallHeadAlignment align_head_particles(float* omega, int rows, int d, AttentionTargets targets,
                                         const RecallPhaseAConfig& config, std::uint64_t seed,
                                         std::uint64_t replica, const std::string& source,
                                         KeyNormalisation keys);

}  // namespace cpm
