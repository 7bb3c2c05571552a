#include "config/run_config.hpp"

#include <unistd.h>

#include <cmath>
#include <iomanip>
#include <sstream>

#include "config/toml_reader.hpp"
#include "io/input_error.hpp"
#include "parallel/launch_environment.hpp"

namespace cpm {

const std::vector<std::string>& names(GridInitialKind) {
  static const std::vector<std::string> all{"law", "file", "compact_power", "sech2"};
  return all;
}

namespace {

constexpr int kMaxCellsPerAxis = 1 << 24;

std::string format_count(double n) {
  std::ostringstream o;
  o << std::setprecision(15) << n;
  return o.str();
}

// "1.5 GB": bytes in decimal units, two or three significant digits.
std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000.0 && u < 6) {
    bytes /= 1000.0;
    ++u;
  }
  std::ostringstream o;
  o << std::setprecision(bytes < 10 ? 2 : 3) << bytes << ' ' << units[u];
  return o.str();
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

// A run that cannot fit in this machine's memory stops at configuration, naming what it would
// need, instead of failing to allocate after its output folder was made. Spread over P ranks
// (launched by mpirun), each rank needs its 1/P of the particle arrays and of the grid, the first
// rank also the frame it gathers (two d-vectors per particle, two values per cell), out of this
// machine's memory shared by the ranks it runs.
void check_memory(TomlReader& particles, TomlReader& root, const RunConfig& c) {
  const double available = physical_memory_bytes();
  if (available <= 0.0) return;
  const RunMemory need = estimated_run_memory(c);
  const int ranks = launched_ranks(), here = launched_local_ranks();
  if (ranks > 1) {
    // The frames gather the particles (positions, drift) and the grid's ρ and W∗ρ.
    const double gathered = static_cast<double>(c.n) * 2.0 * c.domain.dim() * sizeof(double) +
                            need.cells * 2.0 * sizeof(double);
    const double per_rank = (need.particles + need.grid) / ranks + gathered;
    const double share = available / here;
    if (per_rank <= share) return;
    particles.fail("n", "a run of " + format_count(static_cast<double>(c.n)) + " particles over " +
                            std::to_string(ranks) + " MPI ranks needs at least " +
                            format_bytes(per_rank) + " of memory on the first rank (" +
                            format_bytes(need.particles / ranks) +
                            " for its share of the particles, " + format_bytes(gathered) +
                            " for the frames it gathers); this machine has " + format_bytes(share) +
                            " per rank for its " + std::to_string(here) + " ranks");
  }
  const double total = need.particles + need.grid;
  if (total <= available) return;
  const std::string why = "needs at least " + format_bytes(total) + " of memory (" +
                          format_bytes(need.particles) + " for the particles" +
                          (c.grid ? ", " + format_bytes(need.grid) + " for the grid" : "") +
                          "); this machine has " + format_bytes(available);
  if (need.particles >= need.grid)
    particles.fail("n", "a run of " + format_count(static_cast<double>(c.n)) + " particles " + why);
  TomlReader grid = root.table("grid");
  grid.fail("cells", "a grid of " + format_count(need.cells) + " cells " + why);
}

// "Grid too small for the domain": fewer than 4 cells on an axis, or a box that does not
// cover D's bounding box.
GridConfig read_grid(TomlReader t, const Domain& domain) {
  GridConfig g;
  const int dim = domain.dim();
  require(t, dim <= 3, "cells", "the grid solver works in d = 1, 2 and 3 only");
  const std::vector<double> cells = t.number_or_numbers("cells");
  require(t, cells.size() == 1 || static_cast<int>(cells.size()) == dim, "cells",
          "needs one count per axis (d = " + std::to_string(dim) + ") or a single count for all");
  g.cells.resize(dim);
  for (int a = 0; a < dim; ++a) {
    const double n = cells[cells.size() == 1 ? 0 : a];
    require(t, n == std::floor(n), "cells", "must be whole numbers");
    require(t, n <= kMaxCellsPerAxis, "cells",
            format_count(n) + " cells along axis " + std::to_string(a) + " exceed the limit of " +
                std::to_string(kMaxCellsPerAxis) + " per axis");
    require(t, n >= 4, "cells",
            "grid too small for the domain: " + std::to_string(static_cast<long>(n)) +
                " cells along axis " + std::to_string(a) + " (at least 4 are needed)");
    g.cells[a] = static_cast<int>(n);
  }
  const bool unbounded = domain.kind() == Domain::Kind::whole_space;
  if (unbounded || t.has("lower") || t.has("upper")) {
    const std::string why = unbounded ? " (a whole_space domain needs the grid box)" : "";
    g.lower = t.vector("lower");
    g.upper = t.vector("upper");
    require(t, g.lower.size() == dim, "lower",
            "must have d = " + std::to_string(dim) + " coordinates" + why);
    require(t, g.upper.size() == dim, "upper",
            "must have d = " + std::to_string(dim) + " coordinates" + why);
    require(t, (g.upper.array() > g.lower.array()).all(), "upper",
            "must exceed lower in every coordinate");
    if (!unbounded)
      require(t,
              (g.lower.array() <= domain.lower().array()).all() &&
                  (g.upper.array() >= domain.upper().array()).all(),
              "lower",
              "grid too small for the domain: the grid box must cover the domain's bounding box");
  }
  g.cfl = t.number("cfl", g.cfl);
  require(t, g.cfl > 0.0 && g.cfl <= 1.0, "cfl", "must lie in (0, 1]");
  if (t.has("step")) {
    g.step = t.number("step");
    require(t, g.step > 0.0, "step",
            "must be positive (leave it out for a step from the stability bound)");
  }
  g.scheme = t.enumerated<Reconstruction>("scheme", g.scheme);
  g.directions = static_cast<int>(t.integer("directions", g.directions));
  require(t, g.directions >= 1, "directions", "must be at least 1");
  if (t.has("mmd_bandwidth")) {
    g.mmd_bandwidth = t.number("mmd_bandwidth");
    require(t, g.mmd_bandwidth > 0.0, "mmd_bandwidth", "must be positive");
  }

  TomlReader init = t.table("initial");
  GridInitialConfig& i = g.initial;
  i.kind = init.enumerated<GridInitialKind>("kind", i.kind);
  if (i.kind == GridInitialKind::file) {
    i.file = init.string("file");
    require(init, !i.file.empty(), "file", "must name a file of cell averages");
  } else if (i.kind == GridInitialKind::compact_power || i.kind == GridInitialKind::sech2) {
    i.centre = init.vector("centre", Eigen::VectorXd::Zero(dim));
    require(init, i.centre.size() == dim, "centre",
            "must have d = " + std::to_string(dim) + " coordinates");
    if (i.kind == GridInitialKind::compact_power) {
      i.radius = init.number("radius", i.radius);
      require(init, i.radius > 0.0, "radius", "must be positive");
      i.exponent = init.number("exponent", i.exponent);
      require(init, i.exponent >= 0.0, "exponent", "must be non-negative");
    } else {
      i.width = init.number("width", i.width);
      require(init, i.width > 0.0, "width", "must be positive");
    }
  }
  init.finish();
  t.finish();
  return g;
}

}  // namespace

namespace {

RunConfig parse_config(const std::string& text, const std::string& source,
                       const std::function<void(TomlReader&)>* read_study) {
  TomlReader root = TomlReader::parse(text, source);
  RunConfig c;
  c.source = source;
  c.domain = read_domain(root.table("domain"));
  const int dim = c.domain.dim();

  TomlReader particles = root.table("particles");
  if (read_study) {
    require(particles, !particles.has("n"), "n",
            "a study sets its particle numbers in its own section (ns)");
  } else {
    const auto n = particles.integer("n");
    require(particles, n >= 1, "n", "must be at least 1");
    c.n = static_cast<Eigen::Index>(n);
  }
  const auto seed = particles.integer("seed", 1);
  require(particles, seed >= 0, "seed", "must be non-negative");
  c.seed = static_cast<std::uint64_t>(seed);
  particles.finish();

  c.potential = read_potential(root.table("potential"));
  c.interaction = read_interaction(root.table("interaction"), dim);
  c.initial = read_initial(root.table("initial"), dim);
  // The minimiser's default depends on d: Newton's exact Hessian pays off in 1D, where it is a
  // band; in 2D and 3D L-BFGS finds better minima faster (bench/RESULTS.md, "β = ∞ equilibria").
  DynamicsConfig dynamics_defaults;
  dynamics_defaults.minimizer = dim == 1 ? MinimizerMethod::newton : MinimizerMethod::lbfgs;
  c.dynamics = read_dynamics(root.table("dynamics"), DynamicsClock::time, dynamics_defaults);

  c.output.directory = read_output_directory(root.table("output"), c.output.directory);

  if (root.has("grid")) c.grid = read_grid(root.table("grid"), c.domain);
  if (c.dynamics.integrator == Integrator::minimize && (c.grid || read_study))
    throw InputError(source + ": dynamics.integrator: minimize gives one equilibrium, not a " +
                     (read_study ? "trajectory for a study" : "trajectory beside the grid solver") +
                     " (use gradient_flow or implicit_gradient_flow)");

  if (read_study) (*read_study)(root);
  root.finish();
  if (!read_study) check_memory(particles, root, c);
  return c;
}

}  // namespace

RunConfig parse_run_config(const std::string& text, const std::string& source) {
  return parse_config(text, source, nullptr);
}

RunConfig parse_study_config(const std::string& text, const std::string& source,
                             const std::function<void(TomlReader&)>& read_study) {
  return parse_config(text, source, &read_study);
}

RunMemory estimated_run_memory(const RunConfig& c) {
  RunMemory m;
  const double d = c.domain.dim(), n = static_cast<double>(c.n);
  // Positions, drift, the integrator's work arrays and the output frame's copies: at least
  // eight d-vectors of doubles per particle.
  m.particles = n * 8.0 * d * sizeof(double);
  if (c.grid) {
    m.cells = 1.0;
    for (Eigen::Index a = 0; a < c.grid->cells.size(); ++a) m.cells *= c.grid->cells[a];
    // The FFT convolution's zero-padded buffers (2^d cells each: input, output, spectrum,
    // kernel spectrum) and the solver's density, stages, potential and fluxes.
    m.grid = m.cells * (3.5 * std::pow(2.0, d) + 8.0) * sizeof(double);
  }
  return m;
}

RunConfig load_run_config(const std::string& path) {
  return parse_run_config(read_text_file(path), path);
}

}  // namespace cpm
