#include "config/features_config.hpp"

#include <algorithm>
#include <cmath>

#include "config/model_sections.hpp"
#include "config/toml_reader.hpp"
#include "io/text_file.hpp"

namespace cpm {

namespace {

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
  std::vector<double> ns(c.ns.begin(), c.ns.end());
  ns = t.numbers("n", ns);
  require(t, !ns.empty(), "n", "needs at least one feature count");
  c.ns.clear();
  for (double n : ns) {
    // The (points, 2N) feature matrices of 4,096 points and N = 16,384 take 1.6 GB.
    require(t, n >= 1 && n <= 16384 && n == std::floor(n), "n",
            "must hold whole numbers from 1 to 16384");
    c.ns.push_back(static_cast<Eigen::Index>(n));
  }
  c.seeds = positive_count(t, "seeds", c.seeds);
  const auto seed = t.integer("seed", static_cast<std::int64_t>(c.seed));
  require(t, seed >= 0, "seed", "must be at least 0");
  c.seed = static_cast<std::uint64_t>(seed);
  c.sigma = t.number("sigma", c.sigma);
  require(t, c.sigma > 0.0 && std::isfinite(c.sigma), "sigma", "must be positive and finite");
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
  for (double s : c.exponents)
    require(t, s > -2.0 && std::isfinite(s), "s", "must hold exponents above -2");
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

}  // namespace

FeaturesStudyConfig parse_features_config(const std::string& text, const std::string& source) {
  FeaturesStudyConfig c;
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
  if (config.newtonian && std::find(exponents.begin(), exponents.end(), d - 2.0) == exponents.end())
    exponents.push_back(d - 2.0);
  std::vector<InteractionKernel> kernels;
  for (double s : exponents)
    kernels.push_back(s == 0.0    ? InteractionKernel::log()
                      : s == -1.0 ? InteractionKernel::linear()
                                  : InteractionKernel::power(s));
  return kernels;
}

}  // namespace cpm
