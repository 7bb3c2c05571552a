#pragma once
// Turns the plain configuration structs into the objects that compute: the external potential,
// the interaction sum, the force field and the particle integrator.
#include <memory>

#include "io/run_config.hpp"
#include "physics/external_potential.hpp"
#include "solvers/force_field.hpp"
#include "solvers/interaction_sum.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

std::shared_ptr<const ExternalPotential> make_potential(const PotentialConfig& config);
std::unique_ptr<InteractionSum> make_interaction_sum(const RunConfig& config);
std::unique_ptr<ForceField> make_force_field(const RunConfig& config);
// Langevin for finite β (or when asked for at β = ∞); the odeint gradient flow otherwise.
std::unique_ptr<ParticleIntegrator> make_integrator(const RunConfig& config, ForceField& forces,
                                                    std::uint64_t replica);

}  // namespace cpm
