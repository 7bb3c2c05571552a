#pragma once
// Turns the plain configuration structs into the objects that compute: the external potential,
// the interaction sum, the force field, the particle integrator, and for a [grid] section the
// grid, its initial density, the grid solver and the particles' initial sample.
#include <memory>

#include "config/run_config.hpp"
#include "core/grid.hpp"
#include "core/particles.hpp"
#include "parallel/rank_group.hpp"
#include "physics/external_potential.hpp"
#include "solvers/drift_jacobian.hpp"
#include "solvers/energy_minimizer.hpp"
#include "solvers/force_field.hpp"
#include "solvers/interaction_sum.hpp"
#include "solvers/mckean_vlasov.hpp"
#include "solvers/minimizer_integrator.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

std::shared_ptr<const ExternalPotential> make_potential(const PotentialConfig& config);

// What every command specifies of its particle system: the potential it brings (a trap, or the
// alignment of kernel learning), the [interaction] and [dynamics] sections and the domain.
struct ParticleSystemSpec {
  Domain domain = Domain::whole_space(1);
  std::shared_ptr<const ExternalPotential> potential;
  InteractionConfig interaction;
  DynamicsConfig dynamics;
  Eigen::Index n = 0;                   // particles; sizes the particle-mesh grid
  std::uint64_t seed = 1;               // keys the Langevin noise
  std::string source;                   // names the configuration in error messages
  std::string section = "interaction";  // the section `interaction` was read from
  RankGroup ranks{};                    // the ranks that hold the particles between them
};

// A force field and the integrator that moves particles through it (which refers to it), with
// what the implicit integrators and the minimiser also need: the drift's Jacobian (exact pair
// Hessians, or differences of the forces for method = "mesh") and, for integrator = "minimize",
// the minimiser itself (the integrator then runs it on its first advance_to).
struct ParticleSystem {
  std::unique_ptr<ForceField> forces;
  std::unique_ptr<DriftJacobian> jacobian;     // implicit integrators, Newton minimiser
  std::unique_ptr<EnergyMinimizer> minimizer;  // integrator = "minimize"
  std::unique_ptr<ParticleIntegrator> integrator;
};

// The one place where interaction sums, force fields, minimisers and integrators are made, by
// dynamics.integrator: langevin, gradient_flow (odeint), implicit_gradient_flow,
// implicit_langevin, minimize (docs/numerics.md §3.4, §3.9, §3.10); `replica` keys the noise
// streams of independent copies. Throws InputError for integrator = "minimize" with
// method = "mesh" (its forces are not the gradient of its energy). A system spread over ranks
// (spec.ranks) takes the distributed direct sum (solvers/distributed_pair_sum.hpp) and the
// Langevin integrator; other methods and integrators are refused with an InputError there.
ParticleSystem build_particle_system(const ParticleSystemSpec& spec, std::uint64_t replica);
ParticleSystemSpec particle_system_spec(const RunConfig& config);

// Throws InputError "<source>: <section>.method: …" for a mesh sum it cannot make.
std::unique_ptr<InteractionSum> make_interaction_sum(const InteractionConfig& interaction,
                                                     const Domain& domain, Eigen::Index n,
                                                     const std::string& source,
                                                     const std::string& section = "interaction");
// The near range of method = "mesh": interaction.mesh_near_cells, else the default for d.
int mesh_near_cells(const InteractionConfig& interaction, int dim);

// The following need config.grid.
Grid make_grid(const RunConfig& config);
// ρ_0 as cell averages normalised to unit mass: the [initial] law, a file, or a closed form.
std::vector<double> make_initial_density(const RunConfig& config, const Grid& grid);
// Over several `ranks` each solves its slab of the grid (McKeanVlasovSolver's spread constructor).
std::unique_ptr<McKeanVlasovSolver> make_grid_solver(const RunConfig& config, const Grid& grid,
                                                     const ExternalPotential& potential,
                                                     const RankGroup& ranks = {});
// N particles drawn i.i.d. from ρ_0: from the [initial] law itself when the grid starts from it,
// otherwise from the grid's piecewise-constant ρ_0; projected onto D.
Particles sample_initial_particles(const RunConfig& config, const Grid& grid,
                                   const std::vector<double>& initial_density, Eigen::Index n,
                                   std::uint64_t replica);
// The particles of ids share.first, … of that sample, ids recorded (a rank's share).
Particles sample_initial_share(const RunConfig& config, const Grid& grid,
                               const std::vector<double>& initial_density, IdRange share,
                               std::uint64_t replica);

}  // namespace cpm
