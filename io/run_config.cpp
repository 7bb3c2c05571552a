#include "io/run_config.hpp"

#include <cmath>

#include "io/toml_reader.hpp"

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
