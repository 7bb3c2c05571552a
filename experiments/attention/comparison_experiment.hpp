#pragma once
// The comparison experiment of `cpm train` ([experiment] variants, seeds, datasets): one training
// run (experiments/attention/attention_training.hpp) per data set, variant and seed, in that
// order, each in <output>/<dataset>/<variant>/seed_<s>/, then comparison.md and comparison.csv
// (mean ± sample std over seeds of every metric, clean and perturbed), comparison_runs.csv and
// comparison.png (clean accuracy per variant and data set), kept current as runs finish.
//
// A clean stop (SIGINT/SIGTERM) stops the run under way after its training step, with its own
// training_checkpoint.h5, keeps the finished runs' metrics in <output>/replicas.checkpoint
// (exactly) and names the command that continues; `--restart` with that file takes the finished
// runs as they are, continues the stopped one from its checkpoint and trains the others, so that
// the tables are those of an uninterrupted experiment.
#include "config/train_config.hpp"
#include "experiments/command_options.hpp"

namespace cpm {

void run_comparison_experiment(const TrainConfig& config, const CommandOptions& options);

}  // namespace cpm
