#include "config/train_config.hpp"

#include <cmath>
#include <stdexcept>

#include "config/toml_reader.hpp"

namespace cpm {

const std::vector<std::string>& names(ClassificationDataset) {
  static const std::vector<std::string> n = {"sst2", "rotten_tomatoes", "qqp", "fashion_mnist"};
  return n;
}

std::string AttentionVariant::name() const {
  if (attention == AttentionKind::softmax) return "softmax";
  if (attention == AttentionKind::uniform) return "uniform";
  return std::string(learned_particles ? "kernel-" : "vanilla-") + feature_map_name(map);
}

AttentionVariant parse_attention_variant(const std::string& name) {
  if (name == "softmax") return {AttentionKind::softmax, FeatureMapKind::favor, false};
  if (name == "uniform") return {AttentionKind::uniform, FeatureMapKind::favor, false};
  for (const std::string prefix : {"vanilla-", "kernel-"}) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string map = name.substr(prefix.size());
    for (FeatureMapKind kind :
         {FeatureMapKind::favor, FeatureMapKind::porf_softplus, FeatureMapKind::softmaxfeat})
      if (feature_map_name(kind) == map) return {AttentionKind::linear, kind, prefix == "kernel-"};
  }
  throw std::invalid_argument(
      "unknown attention '" + name +
      "' (softmax, uniform, vanilla-<map> or kernel-<map> with <map> = favor, porf-softplus, "
      "softmaxfeat)");
}

namespace {

void read_data(TomlReader r, DataConfig& d) {
  const std::string name = r.string("dataset", name_of(d.dataset));
  require(r, name != "associative_retrieval" && name != "mqar", "dataset",
          "'" + name + "' is a recall task (run it with `cpm recall`)");
  d.dataset = r.enumerated<ClassificationDataset>("dataset", d.dataset);
  d.directory = r.string("directory", "");
  d.train_path = r.string("train_path", "");
  d.eval_path = r.string("eval_path", "");
  d.max_length = positive_count(r, "max_length", d.max_length);
  d.min_count = positive_count(r, "min_count", d.min_count);
  d.max_vocabulary = static_cast<int>(r.integer("max_vocabulary", 0));
  require(r, d.max_vocabulary == 0 || d.max_vocabulary >= 4, "max_vocabulary",
          "must be 0 (no limit) or ≥ 4");
  const auto train_limit = r.integer("train_limit", 0), eval_limit = r.integer("eval_limit", 0);
  require(r, train_limit >= 0, "train_limit", "must be ≥ 0");
  require(r, eval_limit >= 0, "eval_limit", "must be ≥ 0");
  d.train_limit = static_cast<std::size_t>(train_limit);
  d.eval_limit = static_cast<std::size_t>(eval_limit);
  d.split_seed = static_cast<std::uint64_t>(r.integer("split_seed", 1));
  d.pixel_levels = positive_count(r, "pixel_levels", d.pixel_levels);
  require(r, d.pixel_levels <= 256, "pixel_levels", "must be at most 256");
  if (d.dataset == ClassificationDataset::qqp) {
    require(r, !d.train_path.empty(), "train_path", "qqp needs the GLUE train.tsv path");
    require(r, !d.eval_path.empty(), "eval_path", "qqp needs the GLUE dev.tsv path");
  }
  r.finish();
}

void read_model(TomlReader r, ModelConfig& m) {
  m.d_model = positive_count(r, "d_model", m.d_model);
  m.heads = positive_count(r, "heads", m.heads);
  require(r, m.d_model % m.heads == 0, "heads",
          "d_model = " + std::to_string(m.d_model) +
              " is not divisible by heads = " + std::to_string(m.heads));
  m.layers = positive_count(r, "layers", m.layers);
  m.d_ff = positive_count(r, "d_ff", m.d_ff);
  m.features = positive_count(r, "features", m.features);
  m.dropout = r.number("dropout", m.dropout);
  require(r, m.dropout >= 0.0 && m.dropout < 1.0, "dropout", "must lie in [0, 1)");
  const std::string attention = r.string("attention", "kernel-favor");
  try {
    m.variant = parse_attention_variant(attention);
  } catch (const std::invalid_argument& e) {
    r.fail("attention", e.what());
  }
  m.qk_tied = r.boolean("qk_tied", false);
  read_particle_features(r, m);
  r.finish();
}

void read_training(TomlReader r, TrainingConfig& t) {
  t.epochs = static_cast<int>(r.integer("epochs", t.epochs));
  require(r, t.epochs >= 0, "epochs", "must be ≥ 0");
  t.batch_size = positive_count(r, "batch_size", t.batch_size);
  read_optimiser(r, t);
  t.seed = static_cast<std::uint64_t>(r.integer("seed", 1));
  r.finish();
}

void read_phase_a(TomlReader r, PhaseAConfig& p, int head_size, KeyNormalisation keys) {
  p.warmup_epochs = static_cast<int>(r.integer("warmup_epochs", 0));
  require(r, p.warmup_epochs >= 0, "warmup_epochs", "must be ≥ 0");
  p.dynamics = read_dynamics(r.table("dynamics"), DynamicsClock::steps, p.dynamics);
  const bool lambda_given = r.table("interaction").has("lambda");
  p.interaction = read_interaction(r.table("interaction"), head_size, p.interaction);
  p.gamma = r.number("gamma", p.gamma);
  require(r, p.gamma > 0.0, "gamma", "must be positive");
  p.relative_gamma = r.boolean("relative_gamma", p.relative_gamma);
  if (r.has("radius")) {
    p.radius = r.number("radius");
    require(r, *p.radius >= 0.0, "radius", "must be ≥ 0 (0: the whole space)");
  }
  const auto sequences = r.integer("sequences", static_cast<std::int64_t>(p.sequences));
  require(r, sequences >= 2, "sequences", "must be at least 2");
  p.sequences = static_cast<std::size_t>(sequences);
  p.centred = r.boolean("centred", p.centred);
  p.queries_and_keys =
      r.choice("align_on", {"keys", "queries_and_keys"},
               p.queries_and_keys ? "queries_and_keys" : "keys") == "queries_and_keys";
  p.normalised = r.boolean("normalised", p.normalised);
  require(r, !p.normalised || keys == KeyNormalisation::none, "normalised",
          std::string("Phase A aligns the keys as model.normalise_keys = \"") +
              key_normalisation_name(keys) + "\" normalises them; leave normalised false");
  p.write_tokens = r.boolean("write_tokens", p.write_tokens);
  p.tolerance = r.number("tolerance", p.tolerance);
  require(r, p.tolerance >= 0.0 && p.tolerance < 1.0, "tolerance",
          "must lie in [0, 1) (0: run dynamics.steps steps)");
  p.check_every = positive_count(r, "check_every", p.check_every);
  if (r.has("repulsion_fraction")) {
    p.repulsion_fraction = r.number("repulsion_fraction");
    require(r, *p.repulsion_fraction >= 0.0 && std::isfinite(*p.repulsion_fraction),
            "repulsion_fraction", "must be a finite number ≥ 0");
    require(r, !lambda_given, "repulsion_fraction",
            "sets λ from the drifts; give it or interaction.lambda, not both");
    require(r, p.interaction.kernel.kind != InteractionKernel::Kind::none, "repulsion_fraction",
            "needs a repulsive interaction kernel (interaction.kernel is none)");
  }
  r.finish();
}

void read_experiment(TomlReader r, ExperimentConfig& e) {
  e.variants = r.strings("variants", std::vector<std::string>{});
  for (const auto& v : e.variants) {
    try {
      parse_attention_variant(v);
    } catch (const std::invalid_argument& err) {
      r.fail("variants", err.what());
    }
  }
  const auto seeds = r.numbers("seeds", std::vector<double>{1, 2, 3});
  e.seeds.clear();
  for (double s : seeds) {
    require(r, s >= 0 && s == static_cast<double>(static_cast<std::uint64_t>(s)), "seeds",
            "must be non-negative integers");
    e.seeds.push_back(static_cast<std::uint64_t>(s));
  }
  require(r, !e.seeds.empty(), "seeds", "needs at least one seed");
  e.protocol = r.choice("protocol", {"independent", "paired"}, e.protocol);
  e.bootstrap_samples = positive_count(r, "bootstrap_samples", e.bootstrap_samples);
  e.keep_checkpoints = r.boolean("keep_checkpoints", e.keep_checkpoints);
  if (e.protocol == "paired") {
    bool any_kernel = false;
    for (const auto& v : e.variants) {
      const AttentionVariant a = parse_attention_variant(v);
      require(r, !(a.attention == AttentionKind::linear && !a.learned_particles), "variants",
              "'" + v + "' is the paired arm of kernel-" + feature_map_name(a.map) +
                  " in the paired protocol; list kernel-<map>, softmax and uniform only");
      any_kernel = any_kernel || a.learned_particles;
    }
    require(r, e.variants.empty() || any_kernel, "variants",
            "the paired protocol needs at least one kernel-<map> variant");
  }
  for (const std::string& d : r.strings("datasets", std::vector<std::string>{})) {
    require(r, is_name_of<ClassificationDataset>(d), "datasets", "unknown data set '" + d + "'");
    e.datasets.push_back(enum_from_name<ClassificationDataset>(d));
  }
  r.finish();
}

}  // namespace

TrainConfig parse_train_config(const std::string& toml_text, const std::string& source) {
  TomlReader root = TomlReader::parse(toml_text, source);
  TrainConfig c;
  c.source = source;
  read_data(root.table("data"), c.data);
  read_model(root.table("model"), c.model);
  read_training(root.table("training"), c.training);
  read_phase_a(root.table("phase_a"), c.phase_a, c.model.d_model / c.model.heads,
               c.model.normalise_keys);
  c.phase_a.source = source;
  {
    TomlReader e = root.table("evaluation");
    c.evaluation.robustness = e.boolean("robustness", true);
    c.evaluation.perturbation_seed = static_cast<std::uint64_t>(e.integer("perturbation_seed", 1));
    e.finish();
  }
  read_experiment(root.table("experiment"), c.experiment);
  c.output_directory = read_output_directory(root.table("output"), c.output_directory);
  root.finish();
  return c;
}

TrainConfig load_train_config(const std::string& path) {
  return parse_train_config(read_text_file(path), path);
}

}  // namespace cpm
