#include "experiments/run/run_output.hpp"

#include <cmath>

#include "experiments/model_builder.hpp"

namespace cpm {

namespace {
std::vector<double> as_list(const Eigen::VectorXd& v) {
  return {v.data(), v.data() + v.size()};
}

// The exponent stored as interaction.s: the kernel's own s for the power and mollified kernels,
// and the Riesz-family exponent of its two limits, 0 for log and −1 for linear, which run files
// have always held there.
double stored_exponent(const InteractionKernel& k) {
  switch (k.kind) {
    case InteractionKernel::Kind::log:
      return 0.0;
    case InteractionKernel::Kind::linear:
      return -1.0;
    default:
      return k.s;
  }
}
}  // namespace

ParameterSet run_parameters(const RunConfig& c) {
  ParameterSet p;
  p.set("particles.n", static_cast<std::int64_t>(c.n));
  p.set("particles.seed", c.seed);
  p.set("domain.kind", c.domain.describe());
  p.set("domain.dim", static_cast<std::int64_t>(c.domain.dim()));
  if (c.domain.kind() == Domain::Kind::ball) {
    p.set("domain.centre", as_list(c.domain.centre()));
    p.set("domain.radius", c.domain.radius());
  } else if (c.domain.kind() == Domain::Kind::box) {
    p.set("domain.lower", as_list(c.domain.lower()));
    p.set("domain.upper", as_list(c.domain.upper()));
  }
  p.set("potential.kind", c.potential.kind);
  p.set("potential.strength", c.potential.strength);
  const InteractionKernel& k = c.interaction.kernel;
  p.set("interaction.kernel", k.describe());
  p.set("interaction.s", stored_exponent(k));
  p.set("interaction.epsilon", k.epsilon);
  p.set("interaction.kappa", k.kappa);
  p.set("interaction.lambda", c.interaction.lambda);
  p.set("interaction.method", c.interaction.method);
  if (c.interaction.method == "mesh")
    p.set("interaction.mesh_near_cells",
          static_cast<std::int64_t>(mesh_near_cells(c.interaction, c.domain.dim())));
  p.set("initial.law", c.initial.describe());
  p.set("dynamics.beta", c.dynamics.beta);
  p.set("dynamics.integrator", c.dynamics.integrator);
  p.set("dynamics.step", c.dynamics.step);
  p.set("dynamics.t_end", c.dynamics.t_end);
  p.set("dynamics.outputs", static_cast<std::int64_t>(c.dynamics.outputs));
  const std::string& integrator = c.dynamics.integrator;
  if (integrator == "gradient_flow" || integrator == "implicit_gradient_flow") {
    p.set("dynamics.absolute_tolerance", c.dynamics.absolute_tolerance);
    p.set("dynamics.relative_tolerance", c.dynamics.relative_tolerance);
  }
  if (integrator == "minimize") {
    p.set("dynamics.minimizer", c.dynamics.minimizer);
    p.set("dynamics.max_iterations", static_cast<std::int64_t>(c.dynamics.max_iterations));
  }
  if (integrator == "minimize" || integrator == "implicit_langevin")
    p.set("dynamics.tolerance", c.dynamics.tolerance);
  if (c.grid) {
    std::vector<double> cells(c.grid->cells.data(), c.grid->cells.data() + c.grid->cells.size());
    p.set("grid.cells", cells);
    p.set("grid.cfl", c.grid->cfl);
    p.set("grid.step", c.grid->step);
    p.set("grid.scheme", c.grid->scheme);
    if (c.grid->lower.size() > 0) {
      p.set("grid.lower", as_list(c.grid->lower));
      p.set("grid.upper", as_list(c.grid->upper));
    }
    p.set("grid.initial", c.grid->initial.kind);
    p.set("grid.directions", static_cast<std::int64_t>(c.grid->directions));
    p.set("grid.mmd_bandwidth", c.grid->mmd_bandwidth);
  }
  return p;
}

CellGrid cell_grid_of(const Grid& grid) {
  CellGrid c;
  c.dim = grid.dim();
  for (int a = 0; a < grid.dim(); ++a) {
    c.cells[a] = grid.cells(a);
    c.origin[a] = grid.lower()[a];
    c.spacing[a] = grid.spacing(a);
  }
  return c;
}

RunOutput::RunOutput(const RunConfig& config, const Grid* grid, bool overwrite)
    : grid_(grid),
      seed_(config.seed),
      h5_(config.output.directory + "/run.h5", H5mdHeader{}, run_parameters(config), config.n,
          config.domain.dim(), overwrite),
      vtk_(config.output.directory, "run") {
  if (grid_) {
    const std::vector<std::uint8_t> mask(grid_->active_mask().begin(), grid_->active_mask().end());
    h5_.set_grid(cell_grid_of(*grid_), mask);
    vtk_.set_grid(cell_grid_of(*grid_), mask);
  }
}

void RunOutput::write_frame(std::int64_t step, double time, const Eigen::MatrixXd& positions,
                            const Eigen::MatrixXd& drift, const std::vector<std::string>& names,
                            const std::vector<double>& values, const std::vector<double>* density,
                            const std::vector<double>* potential,
                            const IntegratorState& solver_state) {
  h5_.write_positions(step, time, positions);
  h5_.write_observables(step, time, names, values);
  force_ = -drift;
  if (!(grid_ && density && potential)) {
    vtk_.write_frame(time, positions, {NamedArray::vector("force", force_)});
  } else {
    const Eigen::Index m = grid_->size();
    const Eigen::Map<const Eigen::VectorXd> rho(density->data(), m), w(potential->data(), m);
    h5_.write_field("density", step, time, rho);
    h5_.write_field("potential", step, time, w);
    // Local density of a particle: ρ in the grid cell that holds it (0 outside the grid).
    local_density_.resize(positions.rows());
    Eigen::VectorXd point(positions.cols());
    for (Eigen::Index k = 0; k < positions.rows(); ++k) {
      point = positions.row(k).transpose();
      const Eigen::Index cell = grid_->locate(point.data());
      local_density_[k] = cell >= 0 ? (*density)[cell] : 0.0;
    }
    vtk_.write_frame(
        time, positions,
        {NamedArray::vector("force", force_), NamedArray::scalar("local_density", local_density_)},
        {NamedArray::scalar("density", rho), NamedArray::scalar("potential", w)});
  }
  h5_.write_checkpoint(RestartState{step, time, seed_, 0, solver_state});
}

}  // namespace cpm
