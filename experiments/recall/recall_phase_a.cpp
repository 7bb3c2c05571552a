#include "experiments/recall/recall_phase_a.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/domain.hpp"
#include "core/particles.hpp"
#include "experiments/attention/attention_phase_a.hpp"
#include "experiments/model_builder.hpp"

namespace cpm {

RecallHeadAlignment align_head_particles(Eigen::MatrixXd& omega, AttentionTargets targets,
                                         const RecallPhaseAConfig& config, std::uint64_t seed,
                                         std::uint64_t replica, const std::string& source,
                                         KeyNormalisation keys,
                                         const std::function<void()>& between_steps) {
  const auto clock_start = std::chrono::steady_clock::now();
  const int rows = static_cast<int>(omega.rows()), d = static_cast<int>(omega.cols());
  const Domain domain = phase_a_domain(config.radius, d);
  Particles particles(rows, d);
  particles.positions = omega;
  domain.project_all(particles.positions);
  const Eigen::MatrixXd initial = particles.positions;

  auto potential = std::make_shared<AttentionWeightPotential>(std::move(targets), 1.0, keys);
  const bool repulsion = config.interaction.kernel.kind != InteractionKernel::Kind::none &&
                         config.repulsion_fraction > 0.0;
  std::unique_ptr<InteractionSum> pairs =
      repulsion
          ? make_interaction_sum(config.interaction, domain, rows, source, "phase_a.interaction")
          : nullptr;
  const PhaseADrifts unit = phase_a_drifts(*potential, pairs.get(), particles.positions);
  const double g0 = unit.alignment;
  potential->set_gamma(g0 > 0.0 && std::isfinite(g0) ? config.gamma / g0 : config.gamma);
  InteractionConfig interaction = config.interaction;
  interaction.lambda = repulsion && unit.repulsion_per_lambda > 0.0
                           ? config.repulsion_fraction * config.gamma / unit.repulsion_per_lambda
                           : 0.0;
  if (!repulsion) interaction.kernel = InteractionKernel::none();

  RecallHeadAlignment a;
  a.before = potential->alignment(particles.positions);
  a.gamma = potential->gamma();
  a.lambda = interaction.lambda;
  a.norm = std::sqrt(initial.rowwise().squaredNorm().mean());
  const ParticleSystem system = build_particle_system(
      {domain, potential, interaction, config.dynamics, rows, seed, source, "phase_a.interaction"},
      replica);
  if (system.minimizer) {  // β = ∞: max_iterations is Phase A's budget, not an error
    const MinimizationResult result =
        system.minimizer->minimize(particles.positions, [&](const MinimizerProgress&) {
          if (between_steps) between_steps();
        });
    a.iterations = result.iterations;
    a.converged = result.converged;
  } else {
    for (int step = 1; step <= config.dynamics.steps; ++step) {
      system.integrator->advance_to(particles, step * config.dynamics.step);
      if (between_steps) between_steps();
    }
    a.iterations = config.dynamics.steps;
  }
  if (!particles.positions.allFinite())
    throw std::runtime_error(
        "phase A: particles became non-finite (reduce phase_a.dynamics.step or the repulsion)");
  a.after = potential->alignment(particles.positions);
  a.displacement = std::sqrt((particles.positions - initial).rowwise().squaredNorm().mean());
  a.norm_after = std::sqrt(particles.positions.rowwise().squaredNorm().mean());
  omega = particles.positions;
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return a;
}

RecallHeadAlignment align_head_particles(float* omega, int rows, int d, AttentionTargets targets,
                                         const RecallPhaseAConfig& config, std::uint64_t seed,
                                         std::uint64_t replica, const std::string& source,
                                         KeyNormalisation keys) {
  Eigen::MatrixXd w(rows, d);
  for (int k = 0; k < rows; ++k)
    for (int a = 0; a < d; ++a) w(k, a) = omega[k * d + a];
  RecallHeadAlignment a =
      align_head_particles(w, std::move(targets), config, seed, replica, source, keys);
  for (int k = 0; k < rows; ++k)
    for (int c = 0; c < d; ++c) omega[k * d + c] = static_cast<float>(w(k, c));
  return a;
}

}  // namespace cpm
