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
  auto flags = std::make_shared<ResultFlags>();
  return {"train", "train a Transformer classifier (Phase A + Phase B), or run a recall study",
          result_arguments(*flags,
                           "continue from the training_checkpoint.h5 a stopped training wrote (an "
                           "experiment: its replicas.checkpoint; a recall study: the stopped "
                           "study's folder)"),
          [flags] {
            if (is_recall_config(read_text_file(flags->config), flags->config)) {
              RecallConfig config = load_recall_config(flags->config);
              if (!flags->output.empty()) config.output_directory = flags->output;
              run_recall_study(config, flags->resolved());
            } else {
              TrainConfig config = load_train_config(flags->config);
              if (!flags->output.empty()) config.output_directory = flags->output;
              run_train_command(config, flags->resolved());
            }
          }};
}

}  // namespace cpm::app
