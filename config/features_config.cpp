#include "config/features_config.hpp"

#include <algorithm>
#include <cmath>

#include "config/model_sections.hpp"
#include "config/toml_reader.hpp"
#include "io/text_file.hpp"

namespace cpm {

namespace {

// The feature counts N under `key`.
std::vector<Eigen::Index> feature_counts(TomlReader& t, const std::string& key,
                                         const std::vector<Eigen::Index>& fallback) {
  std::vector<double> ns(fallback.begin(), fallback.end());
  ns = t.numbers(key, ns);
  require(t, !ns.empty(), key, "needs at least one feature count");
  std::vector<Eigen::Index> counts;
  for (double n : ns) {
    // The (points, 2N) feature matrices of 4,096 points and N = 16,384 take 1.6 GB.
    require(t, n >= 1 && n <= 16384 && n == std::floor(n), key,
            "must hold whole numbers from 1 to 16384");
    counts.push_back(static_cast<Eigen::Index>(n));
  }
  return counts;
}

// The coulomb exponents must exceed this: −2 for W ∗ p to exist against the Gaussian law, −1
// against the Cauchy law of the Laplace kernel (it has no mean).
double lowest_exponent(SpectralLaw law) {
  return law == SpectralLaw::laplace ? -1.0 : -2.0;
}

void read_study(TomlReader t, FeaturesStudyConfig& c) {
  std::vector<std::string> names;
  for (FeatureMethod m : c.methods) names.push_back(feature_method_name(m));
  names = t.strings("methods", names);
  require(t, !names.empty(), "methods", "needs at least one method");
  c.methods.clear();
  for (const std::string& name : names) {
    const auto method = feature_method_from_name(name);
    if (!method)
      t.fail("methods", "unknown method '" + name + "' (iid, orthogonal, sobol, halton, coulomb)");
    c.methods.push_back(*method);
  }
  std::vector<double> dims(c.dims.begin(), c.dims.end());
  dims = t.numbers("dims", dims);
  require(t, !dims.empty(), "dims", "needs at least one dimension");
  c.dims.clear();
  for (double d : dims) {
    require(t, d >= 1 && d <= 1024 && d == std::floor(d), "dims",
            "must hold whole numbers from 1 to 1024");
    c.dims.push_back(static_cast<int>(d));
  }
  c.ns = feature_counts(t, "n", c.ns);
  c.seeds = positive_count(t, "seeds", c.seeds);
  const auto seed = t.integer("seed", static_cast<std::int64_t>(c.seed));
  require(t, seed >= 0, "seed", "must be at least 0");
  c.seed = static_cast<std::uint64_t>(seed);
  c.sigma = t.number("sigma", c.sigma);
  require(t, c.sigma > 0.0 && std::isfinite(c.sigma), "sigma", "must be positive and finite");
  c.law = *spectral_law_from_name(t.choice("kernel", {"gaussian", "laplace"}, "gaussian"));
  // The Cauchy law of the Laplace kernel has no mean: no energy distance (s = −1).
  if (c.law == SpectralLaw::laplace) c.exponents = {-0.5};
  c.bootstrap = positive_count(t, "bootstrap", c.bootstrap);
  c.confidence = t.number("confidence", c.confidence);
  require(t, c.confidence > 0.0 && c.confidence < 1.0, "confidence", "must lie in (0, 1)");
  t.finish();
}

void read_points(TomlReader t, FeaturesStudyConfig& c) {
  c.point_source = t.choice("source", {"gaussian", "fashion_mnist"}, c.point_source);
  if (c.point_source == "fashion_mnist")
    c.image_directory = t.string("directory", c.image_directory);
  // The Gram matrices are n × n.
  c.points = positive_count(t, "count", static_cast<int>(c.points));
  require(t, c.points <= 4096, "count", "must be at most 4096");
  c.selection_points = positive_count(t, "selection_count", static_cast<int>(c.selection_points));
  require(t, c.selection_points <= 4096, "selection_count", "must be at most 4096");
  c.point_scale = t.number("scale", c.point_scale);
  require(t, c.point_scale > 0.0 && std::isfinite(c.point_scale), "scale",
          "must be positive and finite");
  t.finish();
}

void read_coulomb(TomlReader t, FeaturesStudyConfig& c) {
  c.exponents = t.numbers("s", c.exponents);
  const double lowest = lowest_exponent(c.law);
  for (double s : c.exponents)
    require(t, s > lowest && std::isfinite(s), "s",
            c.law == SpectralLaw::laplace
                ? "must hold exponents above -1 for the laplace kernel (its law has no mean)"
                : "must hold exponents above -2");
  c.newtonian = t.boolean("newtonian", c.newtonian);
  require(t, !c.exponents.empty() || c.newtonian, "s",
          "needs at least one exponent unless newtonian = true");
  RepulsionSettings& r = c.repulsion;
  r.lambda = t.number("lambda", r.lambda);
  require(t, r.lambda > 0.0 && std::isfinite(r.lambda), "lambda", "must be positive and finite");
  r.beta = t.number("beta", r.beta);
  require(t, r.beta > 0.0, "beta", "must be positive (inf: the minimiser)");
  r.tolerance = t.number("tolerance", r.tolerance);
  require(t, r.tolerance > 0.0, "tolerance", "must be positive");
  r.max_iterations = positive_count(t, "max_iterations", r.max_iterations);
  r.steps = positive_count(t, "steps", r.steps);
  r.step = t.number("step", r.step);
  require(t, r.step > 0.0 && std::isfinite(r.step), "step", "must be positive and finite");
  t.finish();
}

void read_concentration_features(TomlReader t, KernelConcentrationConfig& c) {
  FeaturesStudyConfig& f = c.features;
  const double d = t.number("dim", 2.0);
  require(t, d >= 1 && d <= 1024 && d == std::floor(d), "dim",
          "must be a whole number from 1 to 1024");
  f.dims = {static_cast<int>(d)};
  std::vector<std::string> names = t.strings("methods", std::vector<std::string>{"iid", "coulomb"});
  require(t, !names.empty(), "methods", "needs at least one method");
  c.methods.clear();
  for (const std::string& name : names) {
    if (name != "iid" && name != "coulomb")
      t.fail("methods", "unknown method '" + name + "' (iid, coulomb)");
    c.methods.push_back(*feature_method_from_name(name));
  }
  const auto seed = t.integer("seed", static_cast<std::int64_t>(f.seed));
  require(t, seed >= 0, "seed", "must be at least 0");
  f.seed = static_cast<std::uint64_t>(seed);
  f.sigma = t.number("sigma", f.sigma);
  require(t, f.sigma > 0.0 && std::isfinite(f.sigma), "sigma", "must be positive and finite");
  t.finish();
}

// The finite-β gas: one exponent; β comes from the [ldp] section.
void read_concentration_gas(TomlReader t, KernelConcentrationConfig& c) {
  RepulsionSettings& r = c.features.repulsion;
  const double s = t.number("s", -1.0);
  require(t, s > -2.0 && s < c.features.dims.front(), "s", "must lie in (-2, dim)");
  c.features.exponents = {s};
  r.kernel = coulomb_candidates(c.features, c.features.dims.front()).front();
  r.lambda = t.number("lambda", r.lambda);
  require(t, r.lambda > 0.0 && std::isfinite(r.lambda), "lambda", "must be positive and finite");
  r.steps = positive_count(t, "steps", r.steps);
  r.step = t.number("step", r.step);
  require(t, r.step > 0.0 && std::isfinite(r.step), "step", "must be positive and finite");
  t.finish();
}

void read_concentration_ldp(TomlReader t, KernelConcentrationConfig& c) {
  c.ns = feature_counts(t, "ns", {});
  c.replicas = positive_count(t, "replicas", c.replicas);
  require(t, c.replicas >= 2, "replicas", "must be at least 2 (the speeds need variances)");
  auto positive_list = [&](const std::string& key) {
    const std::vector<double> values = t.numbers(key, std::vector<double>{});
    for (double b : values)
      require(t, b > 0.0 && std::isfinite(b), key, "must be positive and finite");
    return values;
  };
  c.betas = positive_list("betas");
  c.betas_per_particle = positive_list("betas_per_particle");
  const bool gas =
      std::find(c.methods.begin(), c.methods.end(), FeatureMethod::coulomb) != c.methods.end();
  require(t, !gas || !c.betas.empty() || !c.betas_per_particle.empty(), "betas",
          "the coulomb gas needs betas or betas_per_particle");
  require(t, !gas || *std::min_element(c.ns.begin(), c.ns.end()) >= 2, "ns",
          "the coulomb gas needs N >= 2");
  c.deltas = t.numbers("deltas");
  require(t, !c.deltas.empty(), "deltas", "must not be empty");
  require(t, c.deltas.front() > 0.0, "deltas", "must be positive");
  for (std::size_t i = 1; i < c.deltas.size(); ++i)
    require(t, c.deltas[i] > c.deltas[i - 1], "deltas", "must be strictly increasing");
  c.confidence = t.number("confidence", c.confidence);
  require(t, c.confidence > 0.0 && c.confidence < 1.0, "confidence", "must lie in (0, 1)");
  c.bootstrap = positive_count(t, "bootstrap", c.bootstrap);
  // Replica ids are ints: (ensembles · |ns|) · replicas must stay far below 2³¹.
  const double ensembles = (gas ? c.betas.size() + c.betas_per_particle.size() : 0.0) +
                           (c.methods.size() - (gas ? 1.0 : 0.0));
  require(t, ensembles * static_cast<double>(c.ns.size()) * c.replicas <= 1e9, "replicas",
          "too many replicas in all (at most 1e9 over every ensemble and N)");
  t.finish();
}

}  // namespace

KernelConcentrationConfig parse_kernel_concentration_config(const std::string& text,
                                                            const std::string& source) {
  KernelConcentrationConfig c;
  c.source = source;
  c.features.output_directory = "out/ldp-kernel";
  TomlReader root = TomlReader::parse(text, source);
  read_concentration_features(root.table("features"), c);
  read_points(root.table("points"), c.features);
  read_concentration_gas(root.table("coulomb"), c);
  read_concentration_ldp(root.table("ldp"), c);
  c.features.output_directory =
      read_output_directory(root.table("output"), c.features.output_directory);
  root.finish();
  return c;
}

KernelConcentrationConfig load_kernel_concentration_config(const std::string& path) {
  return parse_kernel_concentration_config(read_text_file(path), path);
}

FeaturesStudyConfig parse_features_config(const std::string& text, const std::string& source) {
  FeaturesStudyConfig c;
  c.source = source;
  TomlReader root = TomlReader::parse(text, source);
  read_study(root.table("study"), c);
  read_points(root.table("points"), c);
  read_coulomb(root.table("coulomb"), c);
  c.output_directory = read_output_directory(root.table("output"), c.output_directory);
  root.finish();
  return c;
}

FeaturesStudyConfig load_features_config(const std::string& path) {
  return parse_features_config(read_text_file(path), path);
}

std::vector<InteractionKernel> coulomb_candidates(const FeaturesStudyConfig& config, int d) {
  std::vector<double> exponents;
  for (double s : config.exponents)
    if (s < d) exponents.push_back(s);
  if (config.newtonian && d - 2.0 > lowest_exponent(config.law) &&
      std::find(exponents.begin(), exponents.end(), d - 2.0) == exponents.end())
    exponents.push_back(d - 2.0);
  std::vector<InteractionKernel> kernels;
  for (double s : exponents)
    kernels.push_back(s == 0.0    ? InteractionKernel::log()
                      : s == -1.0 ? InteractionKernel::linear()
                                  : InteractionKernel::power(s));
  return kernels;
}

double riesz_exponent(const InteractionKernel& kernel) {
  if (kernel.kind == InteractionKernel::Kind::log) return 0.0;
  if (kernel.kind == InteractionKernel::Kind::linear) return -1.0;
  return kernel.s;
}

}  // namespace cpm
