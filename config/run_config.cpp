#include "config/run_config.hpp"

#include <cmath>

#include "config/toml_reader.hpp"
#include "io/input_error.hpp"

namespace cpm {

namespace {

// "Grid too small for the domain": fewer than 4 cells on an axis, or a box that does not
// cover D's bounding box.
GridConfig read_grid(TomlReader t, const Domain& domain) {
  GridConfig g;
  const int dim = domain.dim();
  require(t, dim <= 3, "cells", "the grid solver works in d = 1, 2 and 3 only");
  const std::vector<double> cells = t.numbers("cells");
  require(t, cells.size() == 1 || static_cast<int>(cells.size()) == dim, "cells",
          "needs one count per axis (d = " + std::to_string(dim) + ") or a single count for all");
  g.cells.resize(dim);
  for (int a = 0; a < dim; ++a) {
    const double n = cells[cells.size() == 1 ? 0 : a];
    require(t, n == std::floor(n) && n <= 1 << 24, "cells", "must be whole numbers");
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
  g.scheme = t.choice("scheme", {"first_order", "second_order"}, g.scheme);
  g.directions = static_cast<int>(t.integer("directions", g.directions));
  require(t, g.directions >= 1, "directions", "must be at least 1");
  if (t.has("mmd_bandwidth")) {
    g.mmd_bandwidth = t.number("mmd_bandwidth");
    require(t, g.mmd_bandwidth > 0.0, "mmd_bandwidth", "must be positive");
  }

  TomlReader init = t.table("initial");
  GridInitialConfig& i = g.initial;
  i.kind = init.choice("kind", {"law", "file", "compact_power", "sech2"}, i.kind);
  if (i.kind == "file") {
    i.file = init.string("file");
    require(init, !i.file.empty(), "file", "must name a file of cell averages");
  } else if (i.kind == "compact_power" || i.kind == "sech2") {
    i.centre = init.vector("centre", Eigen::VectorXd::Zero(dim));
    require(init, i.centre.size() == dim, "centre",
            "must have d = " + std::to_string(dim) + " coordinates");
    if (i.kind == "compact_power") {
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
  c.dynamics = read_dynamics(root.table("dynamics"), DynamicsClock::time, DynamicsConfig{});

  TomlReader output = root.table("output");
  c.output.directory = output.string("directory", c.output.directory);
  require(output, !c.output.directory.empty(), "directory", "must not be empty");
  output.finish();

  if (root.has("grid")) c.grid = read_grid(root.table("grid"), c.domain);
  if (c.dynamics.integrator == "minimize" && (c.grid || read_study))
    throw InputError(source + ": dynamics.integrator: minimize gives one equilibrium, not a " +
                     (read_study ? "trajectory for a study" : "trajectory beside the grid solver") +
                     " (use gradient_flow or implicit_gradient_flow)");

  if (read_study) (*read_study)(root);
  root.finish();
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

RunConfig load_run_config(const std::string& path) {
  return parse_run_config(read_text_file(path), path);
}

}  // namespace cpm
