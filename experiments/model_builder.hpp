#pragma once
// Turns the plain configuration structs into the objects that compute: the external potential,
// the interaction sum, the force field, the particle integrator, and for a [grid] section the
// grid, its initial density, the grid solver and the particles' initial sample.
#include <memory>

#include "core/grid.hpp"
#include "core/particles.hpp"
#include "config/run_config.hpp"
#include "physics/external_potential.hpp"
#include "solvers/force_field.hpp"
#include "solvers/interaction_sum.hpp"
#include "solvers/mckean_vlasov.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

std::shared_ptr<const ExternalPotential> make_potential(const PotentialConfig& config);
std::unique_ptr<InteractionSum> make_interaction_sum(const RunConfig& config);
// The near range of method = "mesh": interaction.mesh_near_cells, else the default for d.
int mesh_near_cells(const RunConfig& config);
std::unique_ptr<ForceField> make_force_field(const RunConfig& config);
// Langevin for finite β (or when asked for at β = ∞); the odeint gradient flow otherwise.
std::unique_ptr<ParticleIntegrator> make_integrator(const RunConfig& config, ForceField& forces,
                                                    std::uint64_t replica);

// The following need config.grid.
Grid make_grid(const RunConfig& config);
// ρ_0 as cell averages normalised to unit mass: the [initial] law, a file, or a closed form.
std::vector<double> make_initial_density(const RunConfig& config, const Grid& grid);
std::unique_ptr<McKeanVlasovSolver> make_grid_solver(const RunConfig& config, const Grid& grid,
                                                     const ExternalPotential& potential);
// N particles drawn i.i.d. from ρ_0: from the [initial] law itself when the grid starts from it,
// otherwise from the grid's piecewise-constant ρ_0; projected onto D.
Particles sample_initial_particles(const RunConfig& config, const Grid& grid,
                                   const std::vector<double>& initial_density, Eigen::Index n,
                                   std::uint64_t replica);

}  // namespace cpm
