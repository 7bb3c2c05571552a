#pragma once
// Where a stopped `cpm train` continues from (training_checkpoint.h5 in its output folder): the
// model as io/model_checkpoint.hpp lays it out (group `model`), and under the group `training`
// the position in the schedule, the trainer's totals, AdamW's moments and the fingerprint of the
// configuration file. A damaged file throws InputError with one line naming it.
#include <cstdint>
#include <string>
#include <vector>

#include "io/model_checkpoint.hpp"

namespace cpm {

struct TrainingCheckpoint {
  ModelCheckpoint model;
  std::uint64_t fingerprint = 0;  // text_fingerprint of the configuration file
  int epoch = 0;                  // the epoch under way (from 0)
  std::int64_t position = 0;      // its next example
  std::int64_t step = 0;          // steps taken
  double smoothed_loss = 0.0, seconds = 0.0, tokens = 0.0;
  std::int64_t optimiser_steps = 0;
  std::vector<float> first_moments, second_moments;
};

void save_training_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
TrainingCheckpoint load_training_checkpoint(const std::string& path);

}  // namespace cpm
