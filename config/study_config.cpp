#include "config/study_config.hpp"

#include <algorithm>
#include <cmath>

namespace cpm {

const std::vector<std::string>& names(ConvergenceDistance) {
  static const std::vector<std::string> all{"w1", "w2", "sw2", "mmd", "l1", "energy"};
  return all;
}

const std::vector<std::string>& names(LdpStatistic) {
  static const std::vector<std::string> all{"mean", "energy", "w1"};
  return all;
}

namespace {

void read_convergence_section(TomlReader& root, ConvergenceConfig& c, int dim) {
  TomlReader t = root.table("convergence");
  if (t.has("ns")) {
    for (double n : t.numbers("ns")) {
      require(t, n >= 1 && n == std::floor(n), "ns", "must hold whole numbers of at least 1");
      c.ns.push_back(static_cast<int>(n));
    }
  } else {  // log-spaced range
    const auto lo = t.integer("n_min"), hi = t.integer("n_max"), count = t.integer("n_count", 4);
    require(t, lo >= 1, "n_min", "must be at least 1");
    require(t, hi >= lo, "n_max", "must be at least n_min");
    require(t, count >= 1, "n_count", "must be at least 1");
    for (std::int64_t i = 0; i < count; ++i) {
      const double f = count == 1 ? 0.0 : double(i) / double(count - 1);
      const int n = static_cast<int>(std::lround(lo * std::pow(double(hi) / lo, f)));
      if (c.ns.empty() || n != c.ns.back()) c.ns.push_back(n);
    }
  }
  require(t, !c.ns.empty(), "ns", "must not be empty");
  c.replicas = static_cast<int>(t.integer("replicas", c.replicas));
  require(t, c.replicas >= 2, "replicas", "must be at least 2");
  const std::vector<std::string> defaults =
      dim == 1 ? std::vector<std::string>{"w1", "w2", "l1", "energy"}
               : std::vector<std::string>{"sw2", "mmd", "l1", "energy"};
  const std::vector<std::string> metrics = t.strings("metrics", defaults);
  require(t, !metrics.empty(), "metrics", "must not be empty");
  const std::vector<std::string>& known = names(ConvergenceDistance{});
  for (const std::string& m : metrics) {
    require(t, std::find(known.begin(), known.end(), m) != known.end(), "metrics",
            "unknown metric '" + m + "' (expected w1, w2, sw2, mmd, l1, energy)");
    c.metrics.push_back(enum_from_name<ConvergenceDistance>(m));
    require(t,
            dim == 1 || (c.metrics.back() != ConvergenceDistance::w1 &&
                         c.metrics.back() != ConvergenceDistance::w2),
            "metrics", "w1 and w2 are exact in one dimension only; use sw2");
  }
  c.bootstrap = static_cast<int>(t.integer("bootstrap", c.bootstrap));
  require(t, c.bootstrap >= 100, "bootstrap", "must be at least 100");
  c.confidence = t.number("confidence", c.confidence);
  require(t, c.confidence > 0.0 && c.confidence < 1.0, "confidence", "must lie in (0, 1)");
  t.finish();
}

void read_ldp_section(TomlReader& root, LdpConfig& c, int dim) {
  TomlReader t = root.table("ldp");
  const std::vector<double> ns = t.numbers("ns");
  require(t, !ns.empty(), "ns", "must not be empty");
  for (double n : ns) {
    require(t, n >= 1 && n == std::floor(n), "ns", "must hold whole numbers of at least 1");
    c.ns.push_back(static_cast<int>(n));
  }
  c.replicas = static_cast<int>(t.integer("replicas", c.replicas));
  require(t, c.replicas >= 2, "replicas", "must be at least 2");
  c.statistic = t.enumerated<LdpStatistic>("statistic", c.statistic);
  c.deltas = t.numbers("deltas");
  require(t, !c.deltas.empty(), "deltas", "must not be empty");
  require(t, c.deltas.front() > 0.0, "deltas", "must be positive");
  for (std::size_t i = 1; i < c.deltas.size(); ++i)
    require(t, c.deltas[i] > c.deltas[i - 1], "deltas", "must be strictly increasing");
  c.betas = t.numbers("betas", std::vector<double>{});
  for (double b : c.betas)
    require(t, b > 0.0 && std::isfinite(b), "betas", "must be positive and finite");
  c.confidence = t.number("confidence", c.confidence);
  require(t, c.confidence > 0.0 && c.confidence < 1.0, "confidence", "must lie in (0, 1)");
  if (c.statistic == LdpStatistic::w1)
    require(t, dim == 1, "statistic", "w1 is computed in one dimension only");
  t.finish();
}

void validate_model(const LdpConfig& c) {
  const std::string& where = c.model.source;
  if (c.betas.empty() && !std::isfinite(c.model.dynamics.beta))
    throw InputError(where + ": dynamics.beta: must be finite for a large-deviation study");
  if (c.model.dynamics.integrator != Integrator::langevin)
    throw InputError(where +
                     ": dynamics.integrator: a large-deviation study runs the Langevin dynamics");
  if (c.statistic == LdpStatistic::w1 &&
      (c.model.potential.kind != PotentialKind::quadratic ||
       c.model.interaction.kernel.kind != InteractionKernel::Kind::quadratic ||
       c.model.domain.kind() != Domain::Kind::whole_space))
    throw InputError(where +
                     ": ldp.statistic: w1 needs the Gaussian case (quadratic potential and "
                     "kernel, whole space)");
}

}  // namespace

ConvergenceConfig parse_convergence_config(const std::string& text, const std::string& source) {
  ConvergenceConfig c;
  c.model = parse_study_config(text, source, [&](TomlReader& root) {
    read_convergence_section(root, c, c.model.domain.dim());
  });
  if (!c.model.grid)
    throw InputError(source + ": grid: a convergence study needs a [grid] section for the PDE");
  return c;
}

ConvergenceConfig load_convergence_config(const std::string& path) {
  return parse_convergence_config(read_text_file(path), path);
}

LdpConfig parse_ldp_config(const std::string& text, const std::string& source) {
  TomlReader root = TomlReader::parse(text, source);
  require(root, !root.has("features"), "features",
          "the random-feature kernel's concentration is a study of `cpm concentration`");
  LdpConfig c;
  c.model = parse_study_config(text, source, [&](TomlReader& root) {
    read_ldp_section(root, c, static_cast<int>(c.model.domain.dim()));
  });
  validate_model(c);
  if (c.betas.empty()) c.betas = {c.model.dynamics.beta};
  return c;
}

LdpConfig load_ldp_config(const std::string& path) {
  return parse_ldp_config(read_text_file(path), path);
}

}  // namespace cpm
