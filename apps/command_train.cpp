// `cpm train CONFIG.toml`, `cpm eval CONFIG.toml [--checkpoint FILE]` and
// `cpm predict CHECKPOINT [--text TEXT]...`: the kernel-attention Transformer classifier, and the
// recall study when the configuration's [data] dataset is a recall task.
#include <iostream>
#include <memory>

#include "apps/commands.hpp"
#include "config/recall_config.hpp"
#include "config/train_config.hpp"
#include "experiments/attention/attention_training.hpp"
#include "experiments/recall/recall_study.hpp"
#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm::app {

std::vector<Command> train_commands() {
  struct Options {
    std::string config, checkpoint, output;
    std::vector<std::string> texts;
    TrainOptions train;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  std::vector<Command> commands;
  commands.push_back(
      {"train",
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
           run_recall_study(
               config, {options->train.overwrite, options->train.progress, options->train.restart});
         } else {
           TrainConfig config = load_train_config(options->config);
           if (!options->output.empty()) config.output_directory = options->output;
           run_train_command(config, options->train);
         }
       }});
  commands.push_back(
      {"eval",
       "evaluate a trained classifier on the configured data",
       {value("config", &options->config, "TOML configuration file of the training run", true),
        value("--checkpoint", &options->checkpoint,
              "model file (default: <output.directory>/model.h5)")},
       [options] { run_eval_command(load_train_config(options->config), options->checkpoint); }});
  commands.push_back(
      {"predict",
       "classify texts (one per line on stdin, or --text)",
       {value("checkpoint", &options->checkpoint, "model file written by cpm train", true),
        values("--text", &options->texts,
               "a text to classify (TAB between the two sentences of a pair)")},
       [options] {
         std::vector<std::string> texts = options->texts;
         if (texts.empty())
           for (std::string line; std::getline(std::cin, line);) texts.push_back(line);
         run_predict_command(options->checkpoint, texts);
       }});
  return commands;
}

}  // namespace cpm::app
