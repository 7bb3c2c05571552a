#pragma once
// The keys of [training] and [model] that every Transformer training reads (the classifier of
// `cpm train` and the recall studies), each under one rule: the optimiser's schedule and the
// particle feature maps' settings. A command's configuration derives from these and sets its own
// defaults; the readers take the values already there as the defaults.
#include <string>

#include "config/toml_reader.hpp"

#include "transformer/key_normalisation.hpp"

namespace cpm {

struct OptimiserConfig {
  double learning_rate = 1e-3;           // AdamW's peak rate
  int warmup_steps = 100;                // linear warm-up from 0
  double min_learning_rate_ratio = 0.1;  // cosine decay to this fraction of the peak (1: constant)
  double weight_decay = 0.01;            // decoupled, on the matrices only
  double clip_norm = 1.0;                // the gradient's norm is clipped to this (0: no clipping)
};

// [training] learning_rate, warmup_steps, min_learning_rate_ratio, weight_decay, clip_norm.
void read_optimiser(TomlReader& r, OptimiserConfig& o);

struct ParticleFeatureConfig {
  double feature_epsilon = 1e-6;  // added to every feature value
  // How the particles start: orthogonal | gaussian | sobol | halton | coulomb
  // (frequencies/feature_generator.hpp)
  std::string particle_init = "orthogonal";
  // The keys' features divided by their length, φ(k)/‖φ(k)‖₂ or ‖φ(k)‖₁ (none | l2 | l1;
  // transformer/key_normalisation.hpp). cpm recall reads a list of normalisations in its place
  // (RecallModelConfig::normalisations) and leaves this none.
  KeyNormalisation normalise_keys = KeyNormalisation::none;
};

// [model] feature_epsilon, particle_init, normalise_keys.
void read_particle_features(TomlReader& r, ParticleFeatureConfig& f);
// [model] feature_epsilon and particle_init alone (cpm recall, whose normalise_keys is a study
// axis: config/recall_config.hpp).
void read_particle_draws(TomlReader& r, ParticleFeatureConfig& f);

}  // namespace cpm
