// `cpm train CONFIG.toml`: the kernel-attention Transformer classifier, or the recall study when
// the configuration's [data] dataset is a recall task.
#include <memory>

#include "apps/commands.hpp"
#include "config/recall_config.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/recall/recall_study.hpp"
#include "io/text_file.hpp"

namespace cpm::app {

Command train_command() {
  struct Options {
    std::string config, output;
    CommandOptions train;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  return {"train",
          "train a Transformer classifier (Phase A + Phase B), or run a recall study",
          {value("config", &options->config, "TOML configuration file", true),
           flag("--overwrite", &options->train.overwrite,
                "replace results in an existing output folder"),
           value("--output", &options->output, "output folder (overrides output.directory)"),
           flag("--quiet", &options->quiet, "no progress output"),
           value("--restart", &options->train.restart,
                 "continue from the training_checkpoint.h5 a stopped training wrote (a recall "
                 "study: from the stopped study's folder)")},
          [options] {
            options->train.progress = !options->quiet;
            if (is_recall_config(read_text_file(options->config), options->config)) {
              RecallConfig config = load_recall_config(options->config);
              if (!options->output.empty()) config.output_directory = options->output;
              run_recall_study(config, {options->train.overwrite, options->train.progress,
                                        options->train.restart});
            } else {
              TrainConfig config = load_train_config(options->config);
              if (!options->output.empty()) config.output_directory = options->output;
              run_train_command(config, options->train);
            }
          }};
}

}  // namespace cpm::app
