// `cpm train CONFIG.toml`, `cpm eval CONFIG.toml [--checkpoint FILE]` and
// `cpm predict CHECKPOINT [--text TEXT]...`: the kernel-attention Transformer classifier.
#include <iostream>
#include <memory>

#include "apps/commands.hpp"
#include "experiments/attention/attention_training.hpp"
#include "config/train_config.hpp"

namespace cpm::app {

void add_train_commands(CLI::App& app) {
  struct Options {
    std::string config, checkpoint;
    std::vector<std::string> texts;
    TrainOptions train;
  };
  auto options = std::make_shared<Options>();

  CLI::App* train =
      app.add_subcommand("train", "train a Transformer classifier (Phase A + Phase B)");
  train->add_option("config", options->config, "TOML configuration file")->required();
  train->add_flag("--overwrite", options->train.overwrite,
                  "replace results in an existing output folder");
  train->callback(
      [options] { run_train_command(load_train_config(options->config), options->train); });

  CLI::App* eval =
      app.add_subcommand("eval", "evaluate a trained classifier on the configured data");
  eval->add_option("config", options->config, "TOML configuration file of the training run")
      ->required();
  eval->add_option("--checkpoint", options->checkpoint,
                   "model file (default: <output.directory>/model.h5)");
  eval->callback(
      [options] { run_eval_command(load_train_config(options->config), options->checkpoint); });

  CLI::App* predict =
      app.add_subcommand("predict", "classify texts (one per line on stdin, or --text)");
  predict->add_option("checkpoint", options->checkpoint, "model file written by cpm train")
      ->required();
  predict->add_option("--text", options->texts,
                      "a text to classify (TAB between the two sentences of a pair)");
  predict->callback([options] {
    std::vector<std::string> texts = options->texts;
    if (texts.empty())
      for (std::string line; std::getline(std::cin, line);) texts.push_back(line);
    run_predict_command(options->checkpoint, texts);
  });
}

}  // namespace cpm::app
