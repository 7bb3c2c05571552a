#include "experiments/model_builder.hpp"

#include <stdexcept>

#include "io/config_error.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/gradient_flow.hpp"
#include "solvers/langevin.hpp"
#include "solvers/particle_mesh_sum.hpp"

namespace cpm {

std::shared_ptr<const ExternalPotential> make_potential(const PotentialConfig& config) {
  if (config.kind == "zero") return std::make_shared<ZeroPotential>();
  return std::make_shared<QuadraticPotential>(config.strength);
}

std::unique_ptr<InteractionSum> make_interaction_sum(const RunConfig& config) {
  const std::string& method = config.interaction.method;
  if (method == "reference") return make_reference_pair_sum(config.interaction.kernel);
  if (method == "direct") return make_blocked_pair_sum(config.interaction.kernel);
  if (method == "mesh") {
    const Domain& domain = config.domain;
    if (!domain.lower().allFinite() || domain.dim() > 3)
      throw ConfigError(
          config.source +
          ": interaction.method: mesh needs a bounded domain (ball or box) in d <= 3");
    return make_particle_mesh_sum(config.interaction.kernel, domain.lower(), domain.upper(),
                                  default_mesh_cells(config.n, domain.dim()));
  }
  throw std::invalid_argument("interaction method '" + method + "' is not available");
}

std::unique_ptr<ForceField> make_force_field(const RunConfig& config) {
  return std::make_unique<ForceField>(make_potential(config.potential),
                                      make_interaction_sum(config), config.interaction.lambda);
}

std::unique_ptr<ParticleIntegrator> make_integrator(const RunConfig& config, ForceField& forces,
                                                    std::uint64_t replica) {
  const DynamicsConfig& d = config.dynamics;
  if (d.integrator == "gradient_flow")
    return std::make_unique<GradientFlowIntegrator>(
        forces, config.domain,
        GradientFlowParameters{d.absolute_tolerance, d.relative_tolerance, d.step});
  return std::make_unique<LangevinIntegrator>(
      forces, config.domain, LangevinParameters{d.step, d.beta, config.seed, replica});
}

}  // namespace cpm
