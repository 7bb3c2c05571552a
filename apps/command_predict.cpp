// `cpm predict CHECKPOINT [--text TEXT]...`: the classes a trained classifier gives texts, read
// one per line from standard input when no --text is given.
#include <iostream>
#include <memory>

#include "apps/commands.hpp"
#include "experiments/attention/attention_training.hpp"

namespace cpm::app {

Command predict_command() {
  struct Options {
    std::string checkpoint;
    std::vector<std::string> texts;
  };
  auto options = std::make_shared<Options>();
  return {"predict",
          "classify texts (one per line on stdin, or --text)",
          {value("checkpoint", &options->checkpoint, "model file written by cpm train", true),
           values("--text", &options->texts,
                  "a text to classify (TAB between the two sentences of a pair)")},
          [options] {
            std::vector<std::string> texts = options->texts;
            if (texts.empty())
              for (std::string line; std::getline(std::cin, line);) texts.push_back(line);
            run_predict_command(options->checkpoint, texts);
          }};
}

}  // namespace cpm::app
