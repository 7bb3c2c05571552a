#include "config/kernel_config.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "config/toml_reader.hpp"

namespace cpm {

const std::vector<std::string>& kernel_method_names() {
  static const std::vector<std::string> names = {
      "iid",         "orthogonal",       "sobol",
      "halton",      "coulomb",          "importance",
      "learned",     "learned-beta-inf", "learned-no-repulsion",
      "learned-null"};
  return names;
}

FeatureMap make_feature_map(const KernelFeaturesConfig& features, Eigen::Index n,
                            std::uint64_t seed, std::uint64_t replica) {
  if (features.pairs) return FeatureMap::rff_pairs();
  return FeatureMap::with_random_phases(features.map, n, seed, replica);
}

namespace {

// A number or an array of numbers.
std::vector<double> number_list(TomlReader& t, const std::string& key,
                                std::vector<double> fallback) {
  if (t.has(key)) {
    try {
      return {t.number(key)};
    } catch (const InputError&) {
      return t.numbers(key);
    }
  }
  return t.numbers(key, fallback);
}

KernelDataConfig read_data(TomlReader t) {
  KernelDataConfig c;
  c.task = t.choice("task", {"variance", "radial", "subspace", "mixture", "fashion_mnist", "idx"},
                    c.task);
  const bool images = c.task == "fashion_mnist" || c.task == "idx";
  if (!images) {
    c.dim = static_cast<int>(t.integer("dim", c.dim));
    require(t, c.dim >= 1, "dim", "must be at least 1");
  }
  const auto train = t.integer("train_size", images ? 0 : c.train_size);
  require(t, images ? train >= 0 : train >= 2, "train_size",
          images ? "must be >= 0 (0: all rows)" : "must be at least 2");
  const auto test = t.integer("test_size", images ? 0 : c.test_size);
  require(t, images ? test >= 0 : test >= 1, "test_size",
          images ? "must be >= 0 (0: all rows)" : "must be at least 1");
  c.train_size = train;
  c.test_size = test;
  c.label_noise = number_list(t, "label_noise", c.label_noise);
  require(t, !c.label_noise.empty(), "label_noise", "must not be empty");
  for (double p : c.label_noise)
    require(t, p >= 0.0 && p < 1.0, "label_noise", "must lie in [0, 1)");
  if (c.task == "variance") {
    c.tau = t.number("tau", c.tau);
    require(t, c.tau > 0.0 && c.tau < 1.0, "tau", "must lie in (0, 1)");
  } else if (c.task == "radial" || c.task == "subspace") {
    c.radius = t.number("radius", c.radius);
    require(t, c.radius >= 0.0, "radius", "must be >= 0 (0: the median norm)");
    if (c.task == "subspace") {
      c.relevant = positive_count(t, "relevant", c.relevant);
      require(t, c.relevant <= c.dim, "relevant", "must be at most dim");
    }
  } else if (c.task == "mixture") {
    c.components = static_cast<int>(t.integer("components", c.components));
    c.classes = static_cast<int>(t.integer("classes", c.classes));
    require(t, c.classes >= 2, "classes", "must be at least 2");
    require(t, c.components >= c.classes, "components", "must be at least the number of classes");
    c.separation = t.number("separation", c.separation);
    require(t, c.separation > 0.0, "separation", "must be positive");
    c.width = t.number("width", c.width);
    require(t, c.width > 0.0, "width", "must be positive");
  } else if (c.task == "fashion_mnist") {
    c.directory = t.string("directory", c.directory);
  } else {
    c.train_images = t.string("train_images");
    c.train_labels = t.string("train_labels");
    c.test_images = t.string("test_images");
    c.test_labels = t.string("test_labels");
  }
  c.standardise = t.boolean("standardise", images);
  c.scale = t.number("scale", c.scale);
  require(t, c.scale > 0.0, "scale", "must be positive");
  t.finish();
  return c;
}

KernelFeaturesConfig read_features(TomlReader t) {
  KernelFeaturesConfig c;
  const std::string map = t.choice("map", kernel_feature_map_names(), "rff");
  c.pairs = map == "rff-pairs";
  c.map = c.pairs ? FeatureMapKind::rff : feature_map_kind(map);
  std::vector<double> fallback(c.n.begin(), c.n.end());
  const std::vector<double> n = number_list(t, "n", fallback);
  require(t, !n.empty(), "n", "must not be empty");
  c.n.clear();
  for (double v : n) {
    require(t, v == std::floor(v), "n", "must be whole numbers");
    require(t, v >= 1, "n", "must be at least 1 (the number of features N)");
    c.n.push_back(static_cast<Eigen::Index>(v));
  }
  c.init = t.choice("init", {"orthogonal", "gaussian", "sobol", "halton", "coulomb"}, c.init);
  c.scale = t.number("scale", c.scale);
  require(t, c.scale > 0.0, "scale", "must be positive");
  t.finish();
  return c;
}

KernelAlignmentConfig read_alignment(TomlReader t, Eigen::Index train_size) {
  KernelAlignmentConfig c;
  c.gamma = t.number("gamma", c.gamma);
  require(t, c.gamma > 0.0, "gamma", "must be positive");
  c.centred = t.boolean("centred", c.centred);
  const auto b = t.integer("batch_size", 0);
  require(t, b >= 0, "batch_size", "must be >= 0 (0: the whole training set)");
  require(t, train_size == 0 || b <= train_size, "batch_size", "must not exceed data.train_size");
  c.batch_size = b;
  c.objective =
      alignment_objective_kind(t.choice("objective", alignment_objective_names(), "alignment"));
  c.alpha = t.number("alpha", c.alpha);
  require(t, c.alpha > 0.0, "alpha", "must be positive");
  c.anchor = t.boolean("anchor", c.anchor);
  c.relative_gamma = t.boolean("relative_gamma", c.relative_gamma);
  t.finish();
  return c;
}

// A number or a list of numbers, each checked.
std::vector<double> checked_list(TomlReader& t, const std::string& key,
                                 const std::vector<double>& fallback,
                                 const std::function<bool(double)>& ok, const std::string& reason) {
  const std::vector<double> v = number_list(t, key, fallback);
  require(t, !v.empty(), key, "must not be empty");
  for (double x : v) require(t, ok(x), key, reason);
  return v;
}

KernelClassifierConfig read_classifier(TomlReader t) {
  KernelClassifierConfig c;
  c.kind = t.choice("kind", {"logistic", "ridge"}, c.kind);
  c.l2 = t.number("l2", c.l2);
  require(t, c.l2 > 0.0, "l2", "must be positive");
  c.max_iterations = static_cast<int>(t.integer("max_iterations", c.max_iterations));
  require(t, c.max_iterations >= 1, "max_iterations", "must be at least 1");
  t.finish();
  return c;
}

KernelBaselinesConfig read_baselines(TomlReader t, Eigen::Index max_n) {
  KernelBaselinesConfig c;
  c.methods = t.strings("methods", c.methods);
  require(t, !c.methods.empty(), "methods", "must not be empty");
  for (const auto& m : c.methods) {
    const auto& names = kernel_method_names();
    if (std::find(names.begin(), names.end(), m) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      t.fail("methods", "unknown method '" + m + "' (expected: " + list + ")");
    }
  }
  const auto has = [&](const std::string& m) {
    return std::find(c.methods.begin(), c.methods.end(), m) != c.methods.end();
  };
  require(t, !has("learned-null") || has("learned"), "methods",
          "learned-null uses the settings chosen for learned: list learned too");
  const auto pool = t.integer("pool", std::max<std::int64_t>(c.pool, max_n));
  require(t, pool >= max_n, "pool", "must be at least the largest N of features.n");
  c.pool = pool;
  c.rho = t.number("rho", c.rho);
  require(t, c.rho >= 0.0, "rho", "must be >= 0");
  t.finish();
  return c;
}

}  // namespace

KernelConfig parse_kernel_config(const std::string& text, const std::string& source) {
  TomlReader root = TomlReader::parse(text, source);
  KernelConfig c;
  c.source = source;
  c.data = read_data(root.table("data"));
  c.features = read_features(root.table("features"));
  c.alignment = read_alignment(root.table("alignment"), c.data.train_size);
  const std::optional<int> dim = c.data.task == "fashion_mnist" || c.data.task == "idx"
                                     ? std::nullopt
                                     : std::optional<int>(c.data.dim);
  {
    TomlReader t = root.table("repulsion");
    if (t.has("drift_fraction")) {
      c.repulsion_scale.drift_fraction = t.number("drift_fraction");
      require(t, c.repulsion_scale.drift_fraction >= 0.0, "drift_fraction", "must be >= 0");
      if (t.has("lambda"))
        t.fail("lambda", "give either lambda or drift_fraction (which sets lambda), not both");
    }
    c.repulsion = read_interaction(t, dim, c.repulsion);
  }
  bool beta_given = false;
  {
    TomlReader t = root.table("dynamics");
    beta_given = t.has("beta");
    c.learning.radius = t.number("radius", c.learning.radius);
    require(t, c.learning.radius > 0.0, "radius", "must be positive (\"inf\": no wall)");
    c.learning.record_every = static_cast<int>(t.integer("record_every", c.learning.record_every));
    require(t, c.learning.record_every >= 1, "record_every", "must be at least 1");
    c.dynamics = read_dynamics(t, DynamicsClock::steps, c.dynamics);
  }
  c.classifier = read_classifier(root.table("classifier"));
  c.baselines = read_baselines(root.table("baselines"),
                               *std::max_element(c.features.n.begin(), c.features.n.end()));
  {
    TomlReader t = root.table("selection");
    KernelSelectionConfig& sel = c.selection;
    sel.validation_fraction = t.number("validation_fraction", sel.validation_fraction);
    require(t, sel.validation_fraction > 0.0 && sel.validation_fraction < 1.0,
            "validation_fraction", "must lie in (0, 1)");
    require(t,
            c.data.train_size == 0 ||
                std::llround(sel.validation_fraction * double(c.data.train_size)) <=
                    c.data.train_size - 2,
            "validation_fraction", "leaves fewer than two training rows");
    const auto one_place = [&](const std::string& key, bool elsewhere, const std::string& other) {
      if (t.has(key) && elsewhere)
        t.fail(key, "also given as " + other + "; give the grid here or the value there");
    };
    one_place("beta", beta_given, "dynamics.beta");
    one_place("gamma", root.table("alignment").has("gamma"), "alignment.gamma");
    one_place("l2", root.table("classifier").has("l2"), "classifier.l2");
    sel.gamma = checked_list(
        t, "gamma", {c.alignment.gamma}, [](double v) { return v > 0.0; }, "must be positive");
    sel.beta = checked_list(
        t, "beta", {c.dynamics.beta}, [](double v) { return v > 0.0; },
        "must be positive (\"inf\" only as dynamics.beta; the method learned-beta-inf runs "
        "beta = inf)");
    sel.l2 = checked_list(
        t, "l2", {c.classifier.l2}, [](double v) { return v > 0.0; }, "must be positive");
    const std::vector<double> cp = checked_list(
        t, "checkpoints", {static_cast<double>(c.dynamics.steps)},
        [&](double v) { return v == std::floor(v) && v >= 1 && v <= c.dynamics.steps; },
        "must be whole numbers in 1..dynamics.steps");
    sel.checkpoints.assign(cp.begin(), cp.end());
    std::sort(sel.checkpoints.begin(), sel.checkpoints.end());
    sel.checkpoints.erase(std::unique(sel.checkpoints.begin(), sel.checkpoints.end()),
                          sel.checkpoints.end());
    t.finish();
  }

  TomlReader run = root.table("run");
  const auto seed = run.integer("seed", 1);
  require(run, seed >= 0, "seed", "must be non-negative");
  c.seed = static_cast<std::uint64_t>(seed);
  c.seeds = static_cast<int>(run.integer("seeds", c.seeds));
  require(run, c.seeds >= 1, "seeds", "must be at least 1");
  run.finish();

  c.output_directory = read_output_directory(root.table("output"), c.output_directory);
  root.finish();
  return c;
}

KernelConfig load_kernel_config(const std::string& path) {
  return parse_kernel_config(read_text_file(path), path);
}

}  // namespace cpm
