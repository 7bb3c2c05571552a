#include "config/training_sections.hpp"

#include <cmath>

namespace cpm {

void read_optimiser(TomlReader& r, OptimiserConfig& o) {
  o.learning_rate = r.number("learning_rate", o.learning_rate);
  require(r, o.learning_rate > 0.0 && std::isfinite(o.learning_rate), "learning_rate",
          "must be a positive number");
  o.warmup_steps = non_negative_count(r, "warmup_steps", o.warmup_steps);
  o.min_learning_rate_ratio = r.number("min_learning_rate_ratio", o.min_learning_rate_ratio);
  require(r, o.min_learning_rate_ratio >= 0.0 && o.min_learning_rate_ratio <= 1.0,
          "min_learning_rate_ratio", "must lie in [0, 1]");
  o.weight_decay = r.number("weight_decay", o.weight_decay);
  require(r, o.weight_decay >= 0.0 && std::isfinite(o.weight_decay), "weight_decay",
          "must be a finite number ≥ 0");
  o.clip_norm = r.number("clip_norm", o.clip_norm);
  require(r, o.clip_norm >= 0.0 && std::isfinite(o.clip_norm), "clip_norm",
          "must be a finite number ≥ 0 (0: no clipping)");
}

void read_particle_features(TomlReader& r, ParticleFeatureConfig& f) {
  read_particle_draws(r, f);
  f.normalise_keys = key_normalisation(
      r.choice("normalise_keys", {"none", "l2", "l1"}, key_normalisation_name(f.normalise_keys)));
}

void read_particle_draws(TomlReader& r, ParticleFeatureConfig& f) {
  f.feature_epsilon = r.number("feature_epsilon", f.feature_epsilon);
  require(r, f.feature_epsilon >= 0.0 && f.feature_epsilon < 1.0, "feature_epsilon",
          "must lie in [0, 1)");
  f.particle_init = r.choice(
      "particle_init", {"orthogonal", "gaussian", "sobol", "halton", "coulomb"}, f.particle_init);
}

}  // namespace cpm
