// `cpm eval CONFIG.toml [--checkpoint FILE]`: the metrics of a trained classifier on the data of
// its training configuration.
#include <memory>

#include "apps/commands.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"

namespace cpm::app {

Command eval_command() {
  struct Options {
    std::string config, checkpoint;
  };
  auto options = std::make_shared<Options>();
  return {"eval",
          "evaluate a trained classifier on the configured data",
          {value("config", &options->config, "TOML configuration file of the training run", true),
           value("--checkpoint", &options->checkpoint,
                 "model file (default: <output.directory>/model.h5)")},
          [options] { run_eval_command(load_train_config(options->config), options->checkpoint); }};
}

}  // namespace cpm::app
