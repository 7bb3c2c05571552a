#include "config/run_config.hpp"

#include <cmath>

#include "config/toml_reader.hpp"

namespace cpm {

namespace {

Domain read_domain(TomlReader t) {
  const std::string kind = t.choice("kind", {"ball", "box", "whole_space"});
  Domain d = Domain::whole_space(1);
  if (kind == "ball") {
    const Eigen::VectorXd centre = t.vector("centre");
    require(t, centre.size() >= 1, "centre", "needs at least one coordinate");
    const double radius = t.number("radius");
    require(t, radius > 0.0, "radius", "must be positive");
    d = Domain::ball(centre, radius);
  } else if (kind == "box") {
    const Eigen::VectorXd lower = t.vector("lower"), upper = t.vector("upper");
    require(t, lower.size() >= 1, "lower", "needs at least one coordinate");
    require(t, upper.size() == lower.size(), "upper", "must have as many coordinates as lower");
    require(t, (upper.array() > lower.array()).all(), "upper",
            "must exceed lower in every coordinate");
    d = Domain::box(lower, upper);
  } else {
    const auto dim = t.integer("dim");
    require(t, dim >= 1, "dim", "must be at least 1");
    d = Domain::whole_space(static_cast<int>(dim));
  }
  t.finish();
  return d;
}

PotentialConfig read_potential(TomlReader t) {
  PotentialConfig p;
  p.kind = t.choice("kind", {"zero", "quadratic"}, p.kind);
  if (p.kind == "quadratic") p.strength = t.number("strength", p.strength);
  t.finish();
  return p;
}

InteractionConfig read_interaction(TomlReader t, int dim) {
  InteractionConfig c;
  const std::string kernel = t.choice(
      "kernel", {"riesz", "log", "linear", "mollified", "quadratic", "absolute", "none"}, "riesz");
  using K = InteractionKernel;
  if (kernel == "riesz") {
    const double s = t.number("s");
    require(t, s > 0.0 && s < dim, "s",
            "must satisfy 0 < s < d = " + std::to_string(dim) +
                " for the riesz kernel (use kernel = \"log\" for s = 0)");
    c.kernel = K::riesz(s);
  } else if (kernel == "log") {
    c.kernel = K::riesz(0.0);
  } else if (kernel == "linear") {
    require(t, dim == 1, "kernel", "the linear kernel -|z| is defined for d = 1 only");
    c.kernel = K::riesz(-1.0);
  } else if (kernel == "mollified") {
    const double s = t.number("s");
    require(t, s >= 0.0 && s < dim, "s", "must satisfy 0 <= s < d = " + std::to_string(dim));
    const double eps = t.number("epsilon");
    require(t, eps > 0.0, "epsilon", "must be positive for the mollified kernel");
    c.kernel = K::mollified(s, eps);
  } else if (kernel == "quadratic" || kernel == "absolute") {
    const double kappa = t.number("kappa", 1.0);
    c.kernel = kernel == "quadratic" ? K::quadratic(kappa) : K::absolute(kappa);
  } else {
    c.kernel = K::none();
  }
  c.lambda = t.number("lambda", c.lambda);
  c.method = t.choice("method", {"reference", "direct", "mesh"}, c.method);
  if (t.has("mesh_near_cells")) {
    require(t, c.method == "mesh", "mesh_near_cells", "applies to method = \"mesh\" only");
    const std::int64_t near = t.integer("mesh_near_cells");
    require(t, near >= -1 && near <= 3, "mesh_near_cells",
            "must lie in -1 … 3 (-1: the plain mesh)");
    c.mesh_near_cells = static_cast<int>(near);
  }
  t.finish();
  return c;
}

InitialLaw read_initial(TomlReader t, int dim) {
  InitialLaw law;
  const std::string kind = t.choice("law", {"gaussian", "uniform_ball", "uniform_box"}, "gaussian");
  const Eigen::VectorXd origin = Eigen::VectorXd::Zero(dim);
  if (kind == "gaussian" || kind == "uniform_ball") {
    law.kind = kind == "gaussian" ? InitialLaw::Kind::gaussian : InitialLaw::Kind::uniform_ball;
    law.centre = t.vector("centre", origin);
    require(t, law.centre.size() == dim, "centre",
            "must have d = " + std::to_string(dim) + " coordinates");
    const std::string scale_key = kind == "gaussian" ? "std" : "radius";
    law.scale = t.number(scale_key, 1.0);
    require(t, law.scale > 0.0, scale_key, "must be positive");
  } else {
    law.kind = InitialLaw::Kind::uniform_box;
    law.lower = t.vector("lower");
    law.upper = t.vector("upper");
    require(t, law.lower.size() == dim, "lower",
            "must have d = " + std::to_string(dim) + " coordinates");
    require(t, law.upper.size() == dim, "upper",
            "must have d = " + std::to_string(dim) + " coordinates");
    require(t, (law.upper.array() > law.lower.array()).all(), "upper",
            "must exceed lower in every coordinate");
  }
  t.finish();
  return law;
}

DynamicsConfig read_dynamics(TomlReader t) {
  DynamicsConfig c;
  c.beta = t.number("beta", c.beta);
  require(t, c.beta > 0.0, "beta", "must be positive (use \"inf\" for the noiseless flow)");
  c.integrator = t.choice("integrator", {"langevin", "gradient_flow"}, c.integrator);
  require(t, c.integrator == "langevin" || std::isinf(c.beta), "integrator",
          "gradient_flow is the noiseless flow and needs beta = \"inf\"");
  c.step = t.number("step", c.step);
  require(t, c.step > 0.0, "step", "must be positive");
  c.t_end = t.number("t_end", c.t_end);
  require(t, c.t_end > 0.0, "t_end", "must be positive");
  c.outputs = static_cast<int>(t.integer("outputs", c.outputs));
  require(t, c.outputs >= 1, "outputs", "must be at least 1");
  c.absolute_tolerance = t.number("absolute_tolerance", c.absolute_tolerance);
  require(t, c.absolute_tolerance > 0.0, "absolute_tolerance", "must be positive");
  c.relative_tolerance = t.number("relative_tolerance", c.relative_tolerance);
  require(t, c.relative_tolerance > 0.0, "relative_tolerance", "must be positive");
  t.finish();
  return c;
}

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
  c.dynamics = read_dynamics(root.table("dynamics"));

  TomlReader output = root.table("output");
  c.output.directory = output.string("directory", c.output.directory);
  require(output, !c.output.directory.empty(), "directory", "must not be empty");
  output.finish();

  if (root.has("grid")) c.grid = read_grid(root.table("grid"), c.domain);

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
