#pragma once
// The trainer's settings from a command's [training] keys (config/training_sections.hpp), shared
// by `cpm train` and the recall studies.
#include <cstdint>

#include "config/training_sections.hpp"
#include "transformer/trainer.hpp"

namespace cpm {

inline TrainerSettings trainer_settings(const OptimiserConfig& o, int batch_size,
                                        std::uint64_t seed) {
  TrainerSettings s;
  s.batch_size = batch_size;
  s.learning_rate = o.learning_rate;
  s.warmup_steps = o.warmup_steps;
  s.min_learning_rate_ratio = o.min_learning_rate_ratio;
  s.weight_decay = o.weight_decay;
  s.clip_norm = o.clip_norm;
  s.seed = seed;
  return s;
}

}  // namespace cpm
