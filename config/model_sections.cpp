#include "config/model_sections.hpp"

#include <cmath>
#include <utility>

namespace cpm {

namespace {

std::string coordinates(int dim) {
  return "must have d = " + std::to_string(dim) + " coordinates";
}

// The one rule on a kernel's parameters, as (key, reason); empty when the kernel is fine. Without
// the dimension (commands that learn it from their data) the bounds by d wait for
// check_interaction_dimension.
std::optional<std::pair<std::string, std::string>> kernel_problem(const InteractionKernel& k,
                                                                  std::optional<int> dim) {
  using K = InteractionKernel::Kind;
  const std::string d = dim ? "d = " + std::to_string(*dim) : "d";
  const bool below_d = !dim || k.s < *dim;
  if (k.kind == K::power && !(k.s > -2.0 && k.s != 0.0 && below_d))
    return std::make_pair(std::string("s"), "must satisfy -2 < s < " + d +
                                                ", s != 0, for the riesz kernel (use kernel = "
                                                "\"log\" for s = 0)");
  if (k.kind == K::mollified && !(k.s >= 0.0 && below_d))
    return std::make_pair(std::string("s"), "must satisfy 0 <= s < " + d);
  if (k.kind == K::mollified && !(k.epsilon > 0.0))
    return std::make_pair(std::string("epsilon"),
                          std::string("must be positive for the mollified kernel"));
  if (k.kind == K::linear && dim && *dim != 1)
    return std::make_pair(std::string("kernel"),
                          std::string("the linear kernel -|z| is defined for d = 1 only"));
  return std::nullopt;
}

const char* kernel_name(InteractionKernel::Kind kind) {
  using K = InteractionKernel::Kind;
  switch (kind) {
    case K::power:
      return "riesz";
    case K::log:
      return "log";
    case K::linear:
      return "linear";
    case K::mollified:
      return "mollified";
    case K::quadratic:
      return "quadratic";
    case K::absolute:
      return "absolute";
    case K::none:
      return "none";
  }
  return "none";
}

}  // namespace

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

std::string read_output_directory(TomlReader t, const std::string& fallback) {
  const std::string directory = t.string("directory", fallback);
  require(t, !directory.empty(), "directory", "must not be empty");
  t.finish();
  return directory;
}

PotentialConfig read_potential(TomlReader t) {
  PotentialConfig p;
  p.kind = t.enumerated<PotentialKind>("kind", p.kind);
  if (p.kind == PotentialKind::quadratic) p.strength = t.number("strength", p.strength);
  t.finish();
  return p;
}

InteractionConfig read_interaction(TomlReader t, std::optional<int> dim,
                                   const std::optional<InteractionConfig>& defaults) {
  using K = InteractionKernel::Kind;
  InteractionConfig c = defaults.value_or(InteractionConfig{});
  const InteractionKernel k0 = c.kernel;
  const std::string kernel =
      t.choice("kernel", {"riesz", "log", "linear", "mollified", "quadratic", "absolute", "none"},
               kernel_name(k0.kind));
  // s and ε fall back to the command's defaults, when it has them, for the default's kind only.
  const bool default_kind = defaults && kernel == kernel_name(k0.kind);
  auto fallback = [&](double value) {
    return default_kind ? std::optional<double>(value) : std::nullopt;
  };
  if (kernel == "riesz") {
    c.kernel = InteractionKernel::power(t.number("s", fallback(k0.s)));
  } else if (kernel == "log") {
    c.kernel = InteractionKernel::log();
  } else if (kernel == "linear") {
    c.kernel = InteractionKernel::linear();
  } else if (kernel == "mollified") {
    const double s = t.number("s", fallback(k0.s));
    c.kernel = InteractionKernel::mollified(s, t.number("epsilon", fallback(k0.epsilon)));
  } else if (kernel == "quadratic" || kernel == "absolute") {
    const double kappa = t.number("kappa", default_kind ? k0.kappa : 1.0);
    c.kernel = kernel == "quadratic" ? InteractionKernel::quadratic(kappa)
                                     : InteractionKernel::absolute(kappa);
  } else {
    c.kernel = InteractionKernel::none();
  }
  if (const auto problem = kernel_problem(c.kernel, dim)) t.fail(problem->first, problem->second);
  c.lambda = t.number("lambda", c.lambda);
  require(t, c.lambda >= 0.0 || c.kernel.kind == K::quadratic || c.kernel.kind == K::absolute,
          "lambda", "must be >= 0 (attraction: a quadratic or absolute kernel with kappa < 0)");
  c.method = t.enumerated("method", std::optional(c.method));
  if (t.has("mesh_near_cells")) {
    require(t, c.method == PairSumMethod::mesh, "mesh_near_cells",
            "applies to method = \"mesh\" only");
    const std::int64_t near = t.integer("mesh_near_cells");
    require(t, near >= -1 && near <= 3, "mesh_near_cells",
            "must lie in -1 … 3 (-1: the plain mesh)");
    c.mesh_near_cells = static_cast<int>(near);
  }
  t.finish();
  return c;
}

void check_interaction_dimension(const InteractionConfig& interaction, int dim,
                                 const std::string& source, const std::string& section) {
  if (const auto problem = kernel_problem(interaction.kernel, dim))
    throw InputError(source + ": " + section + "." + problem->first + ": " + problem->second);
}

InitialLaw read_initial(TomlReader t, int dim) {
  InitialLaw law;
  const std::string kind = t.choice("law", {"gaussian", "uniform_ball", "uniform_box"}, "gaussian");
  const Eigen::VectorXd origin = Eigen::VectorXd::Zero(dim);
  if (kind == "gaussian" || kind == "uniform_ball") {
    law.kind = kind == "gaussian" ? InitialLaw::Kind::gaussian : InitialLaw::Kind::uniform_ball;
    law.centre = t.vector("centre", origin);
    require(t, law.centre.size() == dim, "centre", coordinates(dim));
    const std::string scale_key = kind == "gaussian" ? "std" : "radius";
    law.scale = t.number(scale_key, 1.0);
    require(t, law.scale > 0.0, scale_key, "must be positive");
  } else {
    law.kind = InitialLaw::Kind::uniform_box;
    law.lower = t.vector("lower");
    law.upper = t.vector("upper");
    require(t, law.lower.size() == dim, "lower", coordinates(dim));
    require(t, law.upper.size() == dim, "upper", coordinates(dim));
    require(t, (law.upper.array() > law.lower.array()).all(), "upper",
            "must exceed lower in every coordinate");
  }
  t.finish();
  return law;
}

const std::vector<std::string>& names(PairSumMethod) {
  static const std::vector<std::string> all{"reference", "direct", "mesh"};
  return all;
}

const std::vector<std::string>& names(PotentialKind) {
  static const std::vector<std::string> all = {"zero", "quadratic"};
  return all;
}

const std::vector<std::string>& names(Integrator) {
  static const std::vector<std::string> all{"langevin", "gradient_flow", "implicit_gradient_flow",
                                            "implicit_langevin", "minimize"};
  return all;
}

bool noiseless_integrator(Integrator integrator) {
  return integrator == Integrator::gradient_flow ||
         integrator == Integrator::implicit_gradient_flow || integrator == Integrator::minimize;
}

DynamicsConfig read_dynamics(TomlReader t, DynamicsClock clock, const DynamicsConfig& defaults) {
  DynamicsConfig c = defaults;
  c.beta = t.number("beta", c.beta);
  require(t, c.beta > 0.0, "beta", "must be positive (use \"inf\" for the noiseless flow)");
  c.integrator = t.enumerated("integrator", std::optional(c.integrator));
  require(t, !noiseless_integrator(c.integrator) || std::isinf(c.beta), "integrator",
          name_of(c.integrator) +
              (c.integrator == Integrator::minimize ? " finds the noiseless equilibrium"
                                                    : " is the noiseless flow") +
              " and needs beta = \"inf\"");
  const bool minimize = c.integrator == Integrator::minimize;
  if (t.has("minimizer")) {
    require(t, minimize, "minimizer", "applies to integrator = \"minimize\" only");
    c.minimizer = t.enumerated<MinimizerMethod>("minimizer");
  }
  if (t.has("tolerance")) {
    require(t, minimize || c.integrator == Integrator::implicit_langevin, "tolerance",
            "applies to integrator = \"minimize\" or \"implicit_langevin\" only");
    c.tolerance = t.number("tolerance");
    require(t, c.tolerance > 0.0, "tolerance", "must be positive");
  }
  if (t.has("max_iterations")) {
    require(t, minimize, "max_iterations", "applies to integrator = \"minimize\" only");
    const auto iterations = t.integer("max_iterations");
    require(t, iterations >= 1 && iterations <= 1000000000, "max_iterations",
            "must lie in 1 … 10^9");
    c.max_iterations = static_cast<int>(iterations);
  }
  c.step = t.number("step", c.step);
  require(t, c.step > 0.0 && std::isfinite(c.step), "step", "must be positive and finite");
  if (clock == DynamicsClock::time) {
    c.t_end = t.number("t_end", c.t_end);
    require(t, c.t_end > 0.0 && std::isfinite(c.t_end), "t_end",
            "must be positive and finite (a run ends)");
    c.outputs = static_cast<int>(t.integer("outputs", c.outputs));
    require(t, c.outputs >= 1, "outputs", "must be at least 1");
  } else {
    const auto steps = t.integer("steps", c.steps);
    require(t, steps >= 0, "steps", "must be >= 0");
    c.steps = static_cast<int>(steps);
  }
  c.absolute_tolerance = t.number("absolute_tolerance", c.absolute_tolerance);
  require(t, c.absolute_tolerance > 0.0, "absolute_tolerance", "must be positive");
  c.relative_tolerance = t.number("relative_tolerance", c.relative_tolerance);
  require(t, c.relative_tolerance > 0.0, "relative_tolerance", "must be positive");
  t.finish();
  return c;
}

}  // namespace cpm
