#include "experiments/run/run_output.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "experiments/model_builder.hpp"
#include "io/build_info.hpp"
#include "io/disk_room.hpp"
#include "io/h5md_reader.hpp"
#include "io/hdf5_support.hpp"
#include "io/number_format.hpp"
#include "solvers/fft_convolution.hpp"

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
  p.set("potential.kind", name_of(c.potential.kind));
  p.set("potential.strength", c.potential.strength);
  const InteractionKernel& k = c.interaction.kernel;
  p.set("interaction.kernel", k.describe());
  p.set("interaction.s", stored_exponent(k));
  p.set("interaction.epsilon", k.epsilon);
  p.set("interaction.kappa", k.kappa);
  p.set("interaction.lambda", c.interaction.lambda);
  p.set("interaction.method", name_of(c.interaction.method));
  if (c.interaction.method == PairSumMethod::mesh)
    p.set("interaction.mesh_near_cells",
          static_cast<std::int64_t>(mesh_near_cells(c.interaction, c.domain.dim())));
  p.set("initial.law", c.initial.describe());
  p.set("dynamics.beta", c.dynamics.beta);
  p.set("dynamics.integrator", name_of(c.dynamics.integrator));
  p.set("dynamics.step", c.dynamics.step);
  p.set("dynamics.t_end", c.dynamics.t_end);
  p.set("dynamics.outputs", static_cast<std::int64_t>(c.dynamics.outputs));
  const Integrator integrator = c.dynamics.integrator;
  if (integrator == Integrator::gradient_flow || integrator == Integrator::implicit_gradient_flow) {
    p.set("dynamics.absolute_tolerance", c.dynamics.absolute_tolerance);
    p.set("dynamics.relative_tolerance", c.dynamics.relative_tolerance);
  }
  if (integrator == Integrator::minimize) {
    p.set("dynamics.minimizer", name_of(c.dynamics.minimizer));
    p.set("dynamics.max_iterations", static_cast<std::int64_t>(c.dynamics.max_iterations));
  }
  if (integrator == Integrator::minimize || integrator == Integrator::implicit_langevin)
    p.set("dynamics.tolerance", c.dynamics.tolerance);
  if (c.grid) {
    std::vector<double> cells(c.grid->cells.data(), c.grid->cells.data() + c.grid->cells.size());
    p.set("grid.cells", cells);
    p.set("grid.cfl", c.grid->cfl);
    p.set("grid.step", c.grid->step);
    p.set("grid.scheme", name_of(c.grid->scheme));
    if (c.grid->lower.size() > 0) {
      p.set("grid.lower", as_list(c.grid->lower));
      p.set("grid.upper", as_list(c.grid->upper));
    }
    p.set("grid.initial", name_of(c.grid->initial.kind));
    p.set("grid.directions", static_cast<std::int64_t>(c.grid->directions));
    p.set("grid.mmd_bandwidth", c.grid->mmd_bandwidth);
  }
  return p;
}

namespace {

const char* kernel_key(InteractionKernel::Kind kind) {
  switch (kind) {
    case InteractionKernel::Kind::power:
      return "riesz";
    case InteractionKernel::Kind::log:
      return "log";
    case InteractionKernel::Kind::linear:
      return "linear";
    case InteractionKernel::Kind::mollified:
      return "mollified";
    case InteractionKernel::Kind::quadratic:
      return "quadratic";
    case InteractionKernel::Kind::absolute:
      return "absolute";
    case InteractionKernel::Kind::none:
      return "none";
  }
  return "none";
}

void write_grid(TomlDocument& doc, const RunConfig& c) {
  const GridConfig& g = *c.grid;
  std::vector<std::int64_t> cells(g.cells.data(), g.cells.data() + g.cells.size());
  doc.table("grid").entry("cells", toml_integers(cells));
  if (g.lower.size() > 0) {
    doc.entry("lower", toml_floats(as_list(g.lower)));
    doc.entry("upper", toml_floats(as_list(g.upper)));
  } else {
    doc.comment("lower, upper: the domain's bounding box " +
                toml_floats(as_list(c.domain.lower())) + " to " +
                toml_floats(as_list(c.domain.upper())));
  }
  doc.entry("cfl", toml_float(g.cfl)).entry("scheme", toml_string(name_of(g.scheme)));
  if (g.step > 0.0)
    doc.entry("step", toml_float(g.step));
  else
    doc.comment("step: from the stability bound at every step (cfl times the bound)");
  doc.entry("directions", toml_integer(g.directions));
  if (g.mmd_bandwidth > 0.0)
    doc.entry("mmd_bandwidth", toml_float(g.mmd_bandwidth));
  else
    doc.comment("mmd_bandwidth: a twentieth of the grid box's smallest side");
  const GridInitialConfig& i = g.initial;
  doc.table("grid.initial").entry("kind", toml_string(name_of(i.kind)));
  if (i.kind == GridInitialKind::file) doc.entry("file", toml_string(i.file));
  if (i.kind == GridInitialKind::compact_power || i.kind == GridInitialKind::sech2)
    doc.entry("centre", toml_floats(as_list(i.centre)));
  if (i.kind == GridInitialKind::compact_power)
    doc.entry("radius", toml_float(i.radius)).entry("exponent", toml_float(i.exponent));
  if (i.kind == GridInitialKind::sech2) doc.entry("width", toml_float(i.width));
}

}  // namespace

std::string resolved_run_config(const RunConfig& c, const std::string& note) {
  const BuildInfo& build = build_info();
  TomlDocument doc;
  doc.comment("The configuration of this run as cpm resolved it: every key with the value it used.")
      .comment("`cpm run <this file> --output <folder>` repeats the run bit for bit.")
      .comment("Read from " + c.source + " by cpm " + build.version + " (git " +
               build.git_describe + ").");
  if (!note.empty()) doc.comment(note);

  doc.table("particles")
      .entry("n", toml_integer(static_cast<std::int64_t>(c.n)))
      .entry("seed", toml_integer(static_cast<std::int64_t>(c.seed)));

  doc.table("domain");
  switch (c.domain.kind()) {
    case Domain::Kind::ball:
      doc.entry("kind", toml_string("ball"))
          .entry("centre", toml_floats(as_list(c.domain.centre())))
          .entry("radius", toml_float(c.domain.radius()));
      break;
    case Domain::Kind::box:
      doc.entry("kind", toml_string("box"))
          .entry("lower", toml_floats(as_list(c.domain.lower())))
          .entry("upper", toml_floats(as_list(c.domain.upper())));
      break;
    case Domain::Kind::whole_space:
      doc.entry("kind", toml_string("whole_space")).entry("dim", toml_integer(c.domain.dim()));
      break;
  }

  doc.table("potential").entry("kind", toml_string(name_of(c.potential.kind)));
  if (c.potential.kind == PotentialKind::quadratic)
    doc.entry("strength", toml_float(c.potential.strength));

  const InteractionKernel& k = c.interaction.kernel;
  doc.table("interaction").entry("kernel", toml_string(kernel_key(k.kind)));
  if (k.kind == InteractionKernel::Kind::power || k.kind == InteractionKernel::Kind::mollified)
    doc.entry("s", toml_float(k.s));
  if (k.kind == InteractionKernel::Kind::mollified) doc.entry("epsilon", toml_float(k.epsilon));
  if (k.kind == InteractionKernel::Kind::quadratic || k.kind == InteractionKernel::Kind::absolute)
    doc.entry("kappa", toml_float(k.kappa));
  doc.entry("lambda", toml_float(c.interaction.lambda))
      .entry("method", toml_string(name_of(c.interaction.method)));
  if (c.interaction.method == PairSumMethod::mesh)
    doc.entry("mesh_near_cells", toml_integer(mesh_near_cells(c.interaction, c.domain.dim())));

  const InitialLaw& law = c.initial;
  doc.table("initial");
  switch (law.kind) {
    case InitialLaw::Kind::gaussian:
      doc.entry("law", toml_string("gaussian"))
          .entry("centre", toml_floats(as_list(law.centre)))
          .entry("std", toml_float(law.scale));
      break;
    case InitialLaw::Kind::uniform_ball:
      doc.entry("law", toml_string("uniform_ball"))
          .entry("centre", toml_floats(as_list(law.centre)))
          .entry("radius", toml_float(law.scale));
      break;
    case InitialLaw::Kind::uniform_box:
      doc.entry("law", toml_string("uniform_box"))
          .entry("lower", toml_floats(as_list(law.lower)))
          .entry("upper", toml_floats(as_list(law.upper)));
      break;
  }

  const DynamicsConfig& d = c.dynamics;
  doc.table("dynamics")
      .entry("beta", toml_float(d.beta))
      .entry("integrator", toml_string(name_of(d.integrator)))
      .entry("step", toml_float(d.step))
      .entry("t_end", toml_float(d.t_end))
      .entry("outputs", toml_integer(d.outputs))
      .entry("absolute_tolerance", toml_float(d.absolute_tolerance))
      .entry("relative_tolerance", toml_float(d.relative_tolerance));

  doc.table("output").entry("directory", toml_string(c.output.directory));
  if (c.grid) write_grid(doc, c);
  return doc.text();
}

void restore_fft_plans(const std::string& restart) {
  if (restart.empty()) return;
  const std::string wisdom = read_checkpoint_fft_wisdom(restart);
  if (!wisdom.empty()) import_fft_wisdom(wisdom);
}

std::string provenance_lines() {
  const BuildInfo& b = build_info();
  return "cpm_version = " + b.version + "\ngit_describe = " + b.git_describe +
         "\ncompiler = " + b.compiler + " (" + b.build_type +
         ")\ninstruction_set = " + b.instruction_set + "\nlibraries = " + library_versions() + "\n";
}

namespace {

// The H5MD header of a run file: cpm as creator, with the build's provenance.
H5mdHeader run_header() {
  const BuildInfo& b = build_info();
  H5mdHeader header;
  header.creator_version = b.version;
  header.creator_details = {{"git_describe", b.git_describe},
                            {"compiler", b.compiler + " (" + b.build_type + ")"},
                            {"instruction_set", b.instruction_set},
                            {"libraries", library_versions()}};
  return header;
}

}  // namespace

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
      h5_(config.output.directory + "/run.h5", run_header(), run_parameters(config), config.n,
          config.domain.dim(), overwrite),
      vtk_(config.output.directory, "run"),
      source_(config.source),
      vtk_frames_folder_(config.output.directory + "/" + vtk_.frames_folder()) {
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
  // run.h5: the chunks and metadata the frame allocates. ParaView's files: the positions, force
  // and local density of the particles and the two cell fields, base64-encoded, with a margin.
  const bool fields = grid_ && density && potential;
  const std::uintmax_t h5_bytes =
      h5_.bytes_for_next_frame(names, fields ? std::vector<std::string>{"density", "potential"}
                                             : std::vector<std::string>{});
  const auto n = static_cast<std::uintmax_t>(positions.size() + positions.rows()),
             cells = fields ? static_cast<std::uintmax_t>(grid_->size()) : 0;
  const std::uintmax_t vtk_bytes = 2 * 8 * (2 * n + 2 * cells) + 65536;
  const std::string why = lack_of_room({{h5_.path(), h5_bytes}, {vtk_frames_folder_, vtk_bytes}});
  if (!why.empty())
    throw std::runtime_error(h5_.path() + ": no room for the frame at t = " + format_number(time) +
                             " (" + why + "); " + kept_frames_);
  try {
    write_frame_files(step, time, positions, drift, names, values, density, potential,
                      solver_state);
  } catch (const H5::Exception&) {
    // A write failed although the room was there (another process filled the disk). HDF5 can
    // neither close nor flush such a file, and trying damages it: the process ends here.
    std::fprintf(stderr, "cpm: error: %s: cannot write the frame at t = %s (%s)\n",
                 h5_.path().c_str(), format_number(time).c_str(),
                 hdf5::last_library_error_line().c_str());
    std::_Exit(1);
  }
  kept_frames_ = "every frame up to t = " + format_number(time) +
                 " is kept; continue with: cpm run" +
                 (source_ == "embedded default" ? "" : " " + source_) + " --restart " + h5_.path() +
                 " --output <folder with room>";
}

void RunOutput::write_frame_files(std::int64_t step, double time, const Eigen::MatrixXd& positions,
                                  const Eigen::MatrixXd& drift,
                                  const std::vector<std::string>& names,
                                  const std::vector<double>& values,
                                  const std::vector<double>* density,
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
  h5_.write_checkpoint(RestartState{step, time, seed_, 0, solver_state, export_fft_wisdom()});
}

}  // namespace cpm
