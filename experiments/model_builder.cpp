#include "experiments/model_builder.hpp"

#include <cmath>
#include <stdexcept>

#include "core/initial_law.hpp"
#include "io/density_file.hpp"
#include "io/input_error.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/distributed_pair_sum.hpp"
#include "solvers/distributed_particle_mesh_sum.hpp"
#include "solvers/gradient_flow.hpp"
#include "solvers/grid_density.hpp"
#include "solvers/implicit_integrators.hpp"
#include "solvers/langevin.hpp"
#include "solvers/pair_hessian.hpp"
#include "solvers/particle_mesh_sum.hpp"

namespace cpm {

std::shared_ptr<const ExternalPotential> make_potential(const PotentialConfig& config) {
  if (config.kind == PotentialKind::zero) return std::make_shared<ZeroPotential>();
  return std::make_shared<QuadraticPotential>(config.strength);
}

namespace {

void check_mesh_domain(const Domain& domain, const std::string& source,
                       const std::string& section) {
  if (!domain.lower().allFinite() || domain.dim() > 3)
    throw InputError(source + ": " + section +
                     ".method: mesh needs a bounded domain (ball or box) in d <= 3");
}

}  // namespace

int mesh_near_cells(const InteractionConfig& interaction, int dim) {
  return interaction.mesh_near_cells.value_or(default_near_cells(dim));
}

std::unique_ptr<InteractionSum> make_interaction_sum(const InteractionConfig& interaction,
                                                     const Domain& domain, Eigen::Index n,
                                                     const std::string& source,
                                                     const std::string& section) {
  switch (interaction.method) {
    case PairSumMethod::reference:
      return make_reference_pair_sum(interaction.kernel);
    case PairSumMethod::direct:
      return make_blocked_pair_sum(interaction.kernel);
    case PairSumMethod::mesh:
      check_mesh_domain(domain, source, section);
      return make_particle_mesh_sum(interaction.kernel, domain.lower(), domain.upper(),
                                    default_mesh_cells(n, domain.dim()),
                                    mesh_near_cells(interaction, domain.dim()));
  }
  throw std::logic_error("unknown pair-sum method");
}

namespace {

// What a system spread over ranks can run so far (docs/distributed.md §9).
std::unique_ptr<InteractionSum> make_spread_interaction_sum(const ParticleSystemSpec& spec) {
  const std::string ranks = " on " + std::to_string(spec.ranks.size()) + " MPI ranks";
  if (spec.dynamics.integrator != Integrator::langevin)
    throw InputError(spec.source + ": dynamics.integrator: " + name_of(spec.dynamics.integrator) +
                     " does not spread over MPI ranks yet; use \"langevin\"" + ranks +
                     ", or one rank");
  if (spec.interaction.method != PairSumMethod::mesh)
    return std::make_unique<DistributedPairSum>(spec.interaction.kernel, spec.ranks.communicator());
  check_mesh_domain(spec.domain, spec.source, spec.section);
  try {
    return std::make_unique<DistributedParticleMeshSum>(
        spec.interaction.kernel, spec.domain.lower(), spec.domain.upper(),
        default_mesh_cells(spec.n, spec.domain.dim()),
        mesh_near_cells(spec.interaction, spec.domain.dim()), spec.ranks.communicator());
  } catch (const std::invalid_argument& e) {
    throw InputError(spec.source + ": " + spec.section + ".method: " + e.what());
  }
}

}  // namespace

ParticleSystem build_particle_system(const ParticleSystemSpec& spec, std::uint64_t replica) {
  ParticleSystem system;
  system.forces = std::make_unique<ForceField>(
      spec.potential,
      spec.ranks.spread()
          ? make_spread_interaction_sum(spec)
          : make_interaction_sum(spec.interaction, spec.domain, spec.n, spec.source, spec.section),
      spec.interaction.lambda);
  const DynamicsConfig& d = spec.dynamics;
  const bool minimize = d.integrator == Integrator::minimize;
  if (minimize && spec.interaction.method == PairSumMethod::mesh)
    throw InputError(spec.source +
                     ": dynamics.integrator: minimize needs the exact gradient of the energy it "
                     "minimises, which the particle-mesh forces are not (use " +
                     spec.section + ".method = \"direct\")");
  if (d.integrator == Integrator::implicit_gradient_flow ||
      d.integrator == Integrator::implicit_langevin ||
      (minimize && d.minimizer != MinimizerMethod::fire))
    system.jacobian =
        std::make_unique<DriftJacobian>(*system.forces, spec.domain,
                                        spec.interaction.method == PairSumMethod::mesh
                                            ? nullptr
                                            : make_pair_hessian(spec.interaction.kernel));
  if (d.integrator == Integrator::gradient_flow) {
    system.integrator = std::make_unique<GradientFlowIntegrator>(
        *system.forces, spec.domain,
        GradientFlowParameters{d.absolute_tolerance, d.relative_tolerance, d.step});
  } else if (d.integrator == Integrator::implicit_gradient_flow) {
    ImplicitGradientFlowParameters p;
    p.absolute_tolerance = d.absolute_tolerance;
    p.relative_tolerance = d.relative_tolerance;
    p.initial_step = d.step;
    system.integrator = std::make_unique<ImplicitGradientFlowIntegrator>(
        *system.forces, *system.jacobian, spec.domain, p);
  } else if (d.integrator == Integrator::implicit_langevin) {
    system.integrator = std::make_unique<ImplicitLangevinIntegrator>(
        *system.forces, *system.jacobian, spec.domain,
        ImplicitLangevinParameters{d.step, d.beta, spec.seed, replica, d.tolerance, 100});
  } else if (minimize) {
    system.minimizer = std::make_unique<EnergyMinimizer>(
        *system.forces, system.jacobian.get(), spec.domain,
        MinimizerParameters{d.minimizer, d.tolerance, d.max_iterations, d.step});
    system.integrator = std::make_unique<MinimizerIntegrator>(*system.minimizer);
  } else {
    system.integrator = std::make_unique<LangevinIntegrator>(
        *system.forces, spec.domain, LangevinParameters{d.step, d.beta, spec.seed, replica});
  }
  return system;
}

ParticleSystemSpec particle_system_spec(const RunConfig& config) {
  return {config.domain,      make_potential(config.potential),
          config.interaction, config.dynamics,
          config.n,           config.seed,
          config.source};
}

Grid make_grid(const RunConfig& config) {
  const GridConfig& g = *config.grid;
  if (g.lower.size() == 0) return Grid::over_domain(config.domain, g.cells);
  return Grid(config.domain, g.lower, g.upper, g.cells);
}

std::vector<double> make_initial_density(const RunConfig& config, const Grid& grid) {
  const GridInitialConfig& init = config.grid->initial;
  std::vector<double> density;
  if (init.kind == GridInitialKind::file) {
    density = read_density_file(init.file, grid.size());
    for (Eigen::Index c = 0; c < grid.size(); ++c)
      if (!grid.active(c)) density[c] = 0.0;
  } else {
    density = cell_averages(grid, [&](const Eigen::VectorXd& x) {
      if (init.kind == GridInitialKind::law) return config.initial.density(x);
      if (init.kind == GridInitialKind::compact_power)
        return std::pow(std::max(0.0, init.radius * init.radius - (x - init.centre).squaredNorm()),
                        init.exponent);
      double value = 1.0;  // sech2
      for (Eigen::Index a = 0; a < x.size(); ++a)
        value /= std::pow(std::cosh((x[a] - init.centre[a]) / init.width), 2);
      return value;
    });
  }
  const double mass = density_mass(grid, density);
  if (!(mass > 0.0))
    throw InputError(config.source +
                     ": grid.initial: the initial density has zero mass on the grid");
  for (double& v : density) v /= mass;
  return density;
}

std::unique_ptr<McKeanVlasovSolver> make_grid_solver(const RunConfig& config, const Grid& grid,
                                                     const ExternalPotential& potential,
                                                     const RankGroup& ranks) {
  McKeanVlasovParameters p;
  p.lambda = config.interaction.lambda;
  p.beta = config.dynamics.beta;
  p.cfl = config.grid->cfl;
  p.fixed_step = config.grid->step;
  p.reconstruction = config.grid->scheme;
  try {
    return std::make_unique<McKeanVlasovSolver>(grid, potential, config.interaction.kernel, p,
                                                make_initial_density(config, grid), ranks);
  } catch (const std::invalid_argument& e) {
    if (!ranks.spread()) throw;
    throw InputError(config.source + ": grid.cells: " + e.what());
  }
}

Particles sample_initial_particles(const RunConfig& config, const Grid& grid,
                                   const std::vector<double>& initial_density, Eigen::Index n,
                                   std::uint64_t replica) {
  Particles p = sample_initial_share(config, grid, initial_density,
                                     {0, static_cast<std::uint64_t>(n)}, replica);
  p.ids = {};  // row k is particle k
  return p;
}

Particles sample_initial_share(const RunConfig& config, const Grid& grid,
                               const std::vector<double>& initial_density, IdRange share,
                               std::uint64_t replica) {
  const auto count = static_cast<Eigen::Index>(share.count);
  Particles p = config.grid->initial.kind == GridInitialKind::law
                    ? sample_particle_ids(config.initial, share.first, count, config.seed, replica)
                    : sample_ids_from_density(grid, initial_density, share.first, count,
                                              config.seed, replica);
  config.domain.project_all(p.positions);
  return p;
}

}  // namespace cpm
