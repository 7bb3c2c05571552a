#pragma once
// The recall study (docs/model.md §2, "Recall tasks"): for every task size, arm, D_φ, grid point
// (bandwidth τ of scale-sensitive maps, Phase A target of kernel arms) and seed, a model is
// trained on the generated task (experiments/recall/recall_training.hpp). Each arm then keeps, per
// D_φ and size, the grid point with the best validation accuracy (recall_selection.hpp). Writes
// capacity.csv and predictions.csv as runs finish (recall_journal.hpp), and at the end summary.md
// (the validated settings, mean ± std over seeds, each arm's capacity, the capacity diagnostic,
// paired tests) and capacity.png. SIGINT/SIGTERM stop it between two training steps; `restart`
// names the stopped study's folder, whose finished runs are kept.
#include <string>
#include <vector>

#include "config/recall_config.hpp"
#include "experiments/command_options.hpp"
#include "experiments/recall/recall_run.hpp"

namespace cpm {

// Every run of the configuration, then the tables and the figure in config.output_directory.
std::vector<RecallRun> run_recall_study(const RecallConfig& config, const CommandOptions& options);

}  // namespace cpm
