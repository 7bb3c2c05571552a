#include "config/recall_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "config/toml_reader.hpp"
#include "learning/recall_tasks.hpp"
#include "transformer/attention_feature_maps.hpp"

namespace cpm {

const std::vector<std::string>& names(RecallTask) {
  static const std::vector<std::string> n = {"associative_retrieval", "mqar"};
  return n;
}

const std::vector<std::string>& names(AlignmentTarget) {
  static const std::vector<std::string> n = {"", "softmax", "matching", "capacity"};
  return n;
}

const std::vector<std::string>& names(RecallNormalisation) {
  static const std::vector<std::string> n = {"none", "l2", "l1", "qk"};
  return n;
}

KeyNormalisation key_normalisation_of(RecallNormalisation n) {
  switch (n) {
    case RecallNormalisation::l2:
      return KeyNormalisation::l2;
    case RecallNormalisation::l1:
      return KeyNormalisation::l1;
    case RecallNormalisation::none:
    case RecallNormalisation::qk:
      break;
  }
  return KeyNormalisation::none;
}

namespace {

// The arm without its suffixes.
RecallVariant parse_base_variant(const std::string& name) {
  RecallVariant v;
  v.name = name;
  if (name == "softmax" || name == "uniform") {
    v.attention = name == "softmax" ? AttentionKind::softmax : AttentionKind::uniform;
    return v;
  }
  if (name == "elu") {
    v.map.kind = FeatureMapKind::elu;
    return v;
  }
  if (name == "hedgehog" || name == "taylor" || name == "rebased") {  // learned with the network
    v.map.kind = name == "hedgehog" ? FeatureMapKind::hedgehog
                 : name == "taylor" ? FeatureMapKind::taylor
                                    : FeatureMapKind::rebased;
    v.particles = v.trainable = true;
    return v;
  }
  for (int nu = 1; nu <= 3; ++nu)
    if (name == "projected-dpfp" + std::to_string(nu)) {
      v.map.kind = FeatureMapKind::dpfp;
      v.map.dpfp_nu = nu;
      v.map.projected = v.particles = v.trainable = true;
      return v;
    }
  for (int nu = 1; nu <= 3; ++nu)
    if (name == "dpfp" + std::to_string(nu)) {
      v.map.kind = FeatureMapKind::dpfp;
      v.map.dpfp_nu = nu;
      return v;
    }
  if (name == "kernel-favor") {  // Phase A's potential is favor's kernel
    v.particles = v.kernel = true;
    return v;
  }
  if (name == "temperature-favor" || name == "metric-favor") {
    v.particles = true;
    v.feature_input =
        name == "temperature-favor" ? FeatureInput::temperature : FeatureInput::metric;
    return v;
  }
  for (const std::string how : {"vanilla-", "redraw-", "trainable-"}) {
    if (name.rfind(how, 0) != 0) continue;
    const std::string map = name.substr(how.size());
    for (FeatureMapKind kind :
         {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat})
      if (feature_map_name(kind) == map) {
        v.map.kind = kind;
        v.particles = true;
        v.redraw = how == "redraw-";
        v.trainable = how == "trainable-";
        return v;
      }
  }
  throw std::invalid_argument(
      "unknown arm '" + name +
      "' (softmax, uniform, elu, dpfp1, dpfp2, dpfp3, hedgehog, taylor, rebased, projected-dpfp1, "
      "projected-dpfp2, projected-dpfp3, or vanilla-<map>, redraw-<map>, "
      "trainable-<map> with <map> = favor, porf-softplus, softmaxfeat, or kernel-favor, "
      "temperature-favor, metric-favor; then optionally :<generator> and @softmax)");
}

}  // namespace

int recall_feature_dim(const RecallVariant& variant, int budget, int head_size) {
  if (variant.attention != AttentionKind::linear) return 0;
  if (!variant.particles) return feature_dimension(variant.map, 0, head_size);
  if (variant.map.kind == FeatureMapKind::taylor) {
    const int d = taylor_projection_size(budget);
    if (d < 1) throw std::invalid_argument("taylor needs D_φ ≥ 3 (d′ = 1)");
    return static_cast<int>(taylor_feature_dimension(d));
  }
  if (variant.map.kind == FeatureMapKind::rebased) {
    const int d = rebased_projection_size(budget);
    if (d < 1) throw std::invalid_argument("rebased needs D_φ ≥ 2 (d′ = 1)");
    return static_cast<int>(rebased_feature_dimension(d));
  }
  if (variant.map.projected) {
    const int d = budget / (2 * variant.map.dpfp_nu);
    return feature_dimension(variant.map, std::max(d, 1), head_size);  // refuses what does not fit
  }
  return budget;
}

void check_recall_normalisation(const RecallVariant& arm, RecallNormalisation n) {
  if (n != RecallNormalisation::qk) return;
  if (arm.feature_input != FeatureInput::fixed)
    throw std::invalid_argument("\"qk\" learns the scale of q and k, which '" + arm.name +
                                "' learns itself (a temperature or metric in front of φ)");
  if (arm.from_softmax)
    throw std::invalid_argument("\"qk\" cannot start '" + arm.name +
                                "' from the softmax network, whose q and k are not normalised");
}

RecallVariant parse_recall_variant(const std::string& name) {
  std::string base = name;
  bool from_softmax = false;
  if (const std::size_t at = base.find('@'); at != std::string::npos) {
    if (base.substr(at) != "@softmax")
      throw std::invalid_argument("arm '" + name + "': the only start is @softmax");
    from_softmax = true;
    base.resize(at);
  }
  std::string init;
  if (const std::size_t colon = base.find(':'); colon != std::string::npos) {
    init = base.substr(colon + 1);
    base.resize(colon);
  }
  RecallVariant v = parse_base_variant(base);
  v.name = name;
  v.from_softmax = from_softmax;
  if (from_softmax && v.attention == AttentionKind::softmax)
    throw std::invalid_argument("arm '" + name + "': softmax is the teacher itself");
  if (!init.empty()) {
    if (!v.particles || v.map.kind == FeatureMapKind::hedgehog || is_projected(v.map))
      throw std::invalid_argument("arm '" + name + "': only drawn particles take a :generator");
    const std::vector<std::string> generators = {"orthogonal", "gaussian", "sobol", "halton",
                                                 "coulomb"};
    if (std::find(generators.begin(), generators.end(), init) == generators.end())
      throw std::invalid_argument("arm '" + name + "': unknown generator '" + init +
                                  "' (orthogonal, gaussian, sobol, halton, coulomb)");
    v.particle_init = init;
  }
  return v;
}

namespace {

std::vector<int> positive_list(TomlReader& r, const std::string& key,
                               const std::vector<int>& fallback) {
  std::vector<double> given = r.numbers(key, std::vector<double>(fallback.begin(), fallback.end()));
  std::vector<int> out;
  for (double x : given) {
    require(r, x >= 1 && x == std::floor(x) && x < 1e9, key, "must hold positive integers");
    out.push_back(static_cast<int>(x));
  }
  require(r, !out.empty(), key, "needs at least one entry");
  return out;
}

void read_data(TomlReader r, RecallTaskConfig& t) {
  t.dataset = r.enumerated<RecallTask>("dataset");
  const bool mqar = t.dataset == RecallTask::mqar;
  t.pairs = positive_list(r, "pairs", mqar ? std::vector<int>{4, 8} : t.pairs);
  if (mqar) {
    t.lengths = positive_list(r, "lengths", {64, 128});
    require(r, t.lengths.size() == t.pairs.size(), "lengths",
            "needs one entry per entry of pairs (" + std::to_string(t.pairs.size()) + ")");
    t.vocabulary = positive_count(r, "vocabulary", t.vocabulary);
    t.alpha = r.number("alpha", t.alpha);
    t.random_non_queries = r.boolean("random_non_queries", t.random_non_queries);
    for (std::size_t i = 0; i < t.pairs.size(); ++i) {
      try {
        validate(MqarSpec{t.vocabulary, t.lengths[i], t.pairs[i], t.alpha, t.random_non_queries});
      } catch (const std::invalid_argument& e) {
        r.fail("pairs", e.what());
      }
    }
  } else {
    t.key_symbols = non_negative_count(r, "key_symbols", 0);
    t.value_symbols = non_negative_count(r, "value_symbols", 0);
    t.embedding = non_negative_count(r, "embedding", 0);
    for (int s : t.pairs) {
      try {
        validate(AssociativeRetrievalSpec{s, t.key_symbols, t.value_symbols});
      } catch (const std::invalid_argument& e) {
        r.fail("pairs", e.what());
      }
    }
  }
  t.train_examples = positive_count(r, "train_examples", t.train_examples);
  t.validation_examples = positive_count(r, "validation_examples", t.validation_examples);
  t.test_examples = positive_count(r, "test_examples", t.test_examples);
  r.finish();
}

void read_model(TomlReader r, RecallModelConfig& m, bool mqar) {
  m.d_model = positive_count(r, "d_model", m.d_model);
  if (mqar) {
    m.heads = positive_count(r, "heads", m.heads);
    require(r, m.d_model % m.heads == 0, "heads",
            "d_model = " + std::to_string(m.d_model) +
                " is not divisible by heads = " + std::to_string(m.heads));
    m.layers = positive_count(r, "layers", m.layers);
    m.d_ff = non_negative_count(r, "d_ff", m.d_ff);
    m.qk_tied = r.boolean("qk_tied", m.qk_tied);
    m.short_convolution = non_negative_count(r, "short_convolution", m.short_convolution);
    require(r, m.short_convolution == 0 || m.layers >= 2, "short_convolution",
            "needs at least 2 layers (the convolution takes the even layers, attention the odd)");
    m.position_embedding = r.boolean("position_embedding", m.position_embedding);
  }
  m.features = positive_list(r, "features", m.features);
  read_particle_draws(r, m);
  m.normalisations.clear();
  for (const std::string& name :
       r.string_or_strings("normalise_keys", std::vector<std::string>{"none"})) {
    if (!is_name_of<RecallNormalisation>(name)) {
      std::string known;
      for (const std::string& n : names(RecallNormalisation{}))
        known += (known.empty() ? "" : ", ") + n;
      r.fail("normalise_keys", "unknown value '" + name + "' (expected one of: " + known + ")");
    }
    const RecallNormalisation n = enum_from_name<RecallNormalisation>(name);
    require(
        r, std::find(m.normalisations.begin(), m.normalisations.end(), n) == m.normalisations.end(),
        "normalise_keys", "lists '" + name + "' twice");
    m.normalisations.push_back(n);
  }
  require(r, !m.normalisations.empty(), "normalise_keys", "needs at least one entry");
  m.antithetic = r.boolean("antithetic", m.antithetic);
  m.bandwidths = r.numbers("bandwidths", m.bandwidths);
  require(r, !m.bandwidths.empty(), "bandwidths", "needs at least one entry");
  for (double tau : m.bandwidths)
    require(r, tau > 0.0 && std::isfinite(tau), "bandwidths", "must hold positive numbers");
  if (m.antithetic)
    for (int f : m.features)
      require(r, f % 2 == 0, "features", "must be even with antithetic particles (± pairs)");
  r.finish();
}

void read_training(TomlReader r, RecallTrainingConfig& t) {
  t.steps = positive_count(r, "steps", t.steps);
  t.batch_size = positive_count(r, "batch_size", t.batch_size);
  read_optimiser(r, t);
  t.eval_every = positive_count(r, "eval_every", t.eval_every);
  t.learning_rates = r.numbers("learning_rates", std::vector<double>{t.learning_rate});
  require(r, !t.learning_rates.empty(), "learning_rates", "needs at least one entry");
  for (double rate : t.learning_rates)
    require(r, rate > 0.0 && std::isfinite(rate), "learning_rates", "must hold positive numbers");
  t.early_stop_accuracy = r.number("early_stop_accuracy", t.early_stop_accuracy);
  require(r, t.early_stop_accuracy >= 0.0 && t.early_stop_accuracy <= 1.0, "early_stop_accuracy",
          "must lie in [0, 1] (0: no early stop)");
  t.drop_step = non_negative_count(r, "drop_step", t.drop_step);
  require(r, t.drop_step < t.steps, "drop_step",
          "must be below steps = " + std::to_string(t.steps) + " (0: no drop)");
  t.drop_factor = r.number("drop_factor", t.drop_factor);
  require(r, t.drop_factor > 0.0 && t.drop_factor <= 1.0, "drop_factor", "must lie in (0, 1]");
  r.finish();
}

// A non-empty list of Phase A targets; matching and capacity need one matching key per query.
std::vector<AlignmentTarget> read_targets(TomlReader& r, RecallTask task) {
  std::vector<AlignmentTarget> targets;
  for (const std::string& name : r.strings("targets")) {
    require(r, !name.empty() && is_name_of<AlignmentTarget>(name), "targets",
            "holds '" + name + "': expected softmax, matching or capacity");
    require(
        r, name == "softmax" || task == RecallTask::associative_retrieval, "targets",
        "\"" + name + "\" needs dataset = \"associative_retrieval\" (one matching key per query)");
    targets.push_back(enum_from_name<AlignmentTarget>(name));
  }
  require(r, !targets.empty(), "targets", "needs at least one entry");
  return targets;
}

void read_phase_a(TomlReader r, RecallPhaseAConfig& p, const RecallConfig& c, int head_size) {
  p.after_steps = non_negative_count(r, "after_steps", p.after_steps);
  require(
      r, p.after_steps < c.training.steps, "after_steps",
      "must be below training.steps = " + std::to_string(c.training.steps) + " (0: half of them)");
  if (p.after_steps == 0) p.after_steps = c.training.steps / 2;
  if (r.has("targets")) p.targets = read_targets(r, c.task.dataset);
  p.examples = positive_count(r, "examples", c.task.dataset == RecallTask::mqar ? 8 : 256);
  p.gamma = r.number("gamma", p.gamma);
  require(r, p.gamma > 0.0 && std::isfinite(p.gamma), "gamma", "must be a positive number");
  if (r.has("radius")) {
    p.radius = r.number("radius");
    require(r, *p.radius >= 0.0 && std::isfinite(*p.radius), "radius",
            "must be ≥ 0 (0: the whole space)");
  }
  p.dynamics = read_dynamics(r.table("dynamics"), DynamicsClock::steps, p.dynamics);
  p.interaction = read_interaction(
      r.table("interaction"), head_size,
      InteractionConfig{.kernel = InteractionKernel::power(std::max(head_size - 1.0, 0.5)),
                        .lambda = 1.0});
  p.repulsion_fraction = r.number("repulsion_fraction", p.repulsion_fraction);
  require(r, p.repulsion_fraction >= 0.0 && std::isfinite(p.repulsion_fraction),
          "repulsion_fraction", "must be a finite number ≥ 0");
  r.finish();
}

// [grid."<arm>"]: an arm's own bandwidths, learning_rates and targets; keys that name no arm of
// [experiment] variants are refused by finish().
void read_arm_grids(TomlReader grids, RecallConfig& c) {
  auto positive = [](TomlReader& r, const std::string& key, const std::vector<double>& values) {
    require(r, !values.empty(), key, "needs at least one entry");
    for (double x : values)
      require(r, x > 0.0 && std::isfinite(x), key, "must hold positive numbers");
  };
  for (const std::string& name : c.variants) {
    if (!grids.has(name)) continue;
    TomlReader g = grids.table(name);
    RecallArmGrid grid;
    if (g.has("bandwidths")) {
      grid.bandwidths = g.numbers("bandwidths");
      positive(g, "bandwidths", *grid.bandwidths);
    }
    if (g.has("learning_rates")) {
      grid.learning_rates = g.numbers("learning_rates");
      positive(g, "learning_rates", *grid.learning_rates);
    }
    if (g.has("targets")) grid.targets = read_targets(g, c.task.dataset);
    for (RecallNormalisation normalisation : c.model.normalisations) {
      const std::string& key = name_of(normalisation);
      if (!g.has(key)) continue;
      TomlReader n = g.table(key);
      auto& bandwidths = grid.normalisation_bandwidths[normalisation];
      bandwidths = n.numbers("bandwidths");
      positive(n, "bandwidths", bandwidths);
      n.finish();
    }
    g.finish();
    c.arm_grids[name] = grid;
  }
  grids.finish();
}

}  // namespace

std::vector<RecallNormalisation> recall_normalisations(const RecallConfig& c,
                                                       const RecallVariant& arm) {
  if (arm.attention != AttentionKind::linear) return {RecallNormalisation::none};
  return c.model.normalisations;
}

const std::vector<double>& recall_learning_rates(const RecallConfig& c, const std::string& arm) {
  const auto grid = c.arm_grids.find(arm);
  return grid != c.arm_grids.end() && grid->second.learning_rates ? *grid->second.learning_rates
                                                                  : c.training.learning_rates;
}

std::vector<double> recall_bandwidths(const RecallConfig& c, const std::string& name,
                                      RecallNormalisation normalisation) {
  const auto grid = c.arm_grids.find(name);
  if (grid == c.arm_grids.end()) return c.model.bandwidths;
  const auto own = grid->second.normalisation_bandwidths.find(normalisation);
  if (own != grid->second.normalisation_bandwidths.end()) return own->second;
  return grid->second.bandwidths.value_or(c.model.bandwidths);
}

RecallConfig parse_recall_config(const std::string& toml_text, const std::string& source) {
  TomlReader root = TomlReader::parse(toml_text, source);
  RecallConfig c;
  c.source = source;
  read_data(root.table("data"), c.task);
  read_model(root.table("model"), c.model, c.task.dataset == RecallTask::mqar);
  read_training(root.table("training"), c.training);
  {
    TomlReader e = root.table("experiment");
    c.variants = e.strings("variants", c.variants);
    require(e, !c.variants.empty(), "variants", "needs at least one arm");
    const int head_size =
        c.task.dataset == RecallTask::mqar ? c.model.d_model / c.model.heads : c.model.d_model;
    for (const auto& v : c.variants) {
      try {
        const RecallVariant arm = parse_recall_variant(v);
        if (arm.feature_input != FeatureInput::fixed && c.task.dataset == RecallTask::mqar)
          throw std::invalid_argument(
              "a learned temperature or metric is an arm of "
              "associative_retrieval only");
        if (arm.particles)  // D_φ must suit the map (hedgehog: an even D_φ)
          for (int f : c.model.features)
            particle_rows(arm.map, recall_feature_dim(arm, f, head_size), head_size);
        else if (arm.attention == AttentionKind::linear)
          particle_rows(arm.map, feature_dimension(arm.map, 0, head_size), head_size);
      } catch (const std::invalid_argument& err) {
        e.fail("variants", v + ": " + err.what());
      }
      const RecallVariant arm = parse_recall_variant(v);
      for (RecallNormalisation n : recall_normalisations(c, arm)) {
        try {
          check_recall_normalisation(arm, n);
        } catch (const std::invalid_argument& err) {
          root.table("model").fail("normalise_keys", err.what());
        }
      }
    }
    const auto seeds = e.numbers("seeds", std::vector<double>{1, 2, 3});
    c.seeds.clear();
    for (double s : seeds) {
      require(e, s >= 0 && s == std::floor(s) && s < 1e15, "seeds",
              "must be non-negative integers");
      c.seeds.push_back(static_cast<std::uint64_t>(s));
    }
    require(e, !c.seeds.empty(), "seeds", "needs at least one seed");
    e.finish();
  }
  read_phase_a(
      root.table("phase_a"), c.phase_a, c,
      c.task.dataset == RecallTask::mqar ? c.model.d_model / c.model.heads : c.model.d_model);
  read_arm_grids(root.table("grid"), c);
  c.output_directory = read_output_directory(root.table("output"), c.output_directory);
  root.finish();
  return c;
}

RecallConfig load_recall_config(const std::string& path) {
  return parse_recall_config(read_text_file(path), path);
}

}  // namespace cpm
