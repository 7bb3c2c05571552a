// `cpm eval CONFIG.toml [--checkpoint FILE] [--output DIR] [--quiet]`: the metrics of a trained
// classifier on the data of its training configuration. --output names the training run's folder
// as it does for `cpm train` (the model is read from it); --quiet prints the metrics alone.
#include <memory>

#include "apps/commands.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"

namespace cpm::app {

Command eval_command() {
  struct Options {
    ResultFlags flags;  // config, --output (the training run's folder), --quiet
    std::string checkpoint;
  };
  auto options = std::make_shared<Options>();
  ResultFlags& flags = options->flags;
  return {"eval",
          "evaluate a trained classifier on the configured data",
          {value("config", &flags.config, "TOML configuration file of the training run", true),
           value("--checkpoint", &options->checkpoint,
                 "model file (default: <output.directory>/model.h5)"),
           output_argument(flags), quiet_argument(flags)},
          [options] {
            const ResultFlags& f = options->flags;
            run_eval_command(parse_train_config(f.config_text(), f.config), options->checkpoint,
                             !f.quiet);
          }};
}

}  // namespace cpm::app
