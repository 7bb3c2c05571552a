#include "experiments/recall/recall_study.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/stop_request.hpp"
#include "experiments/recall/recall_journal.hpp"
#include "experiments/recall/recall_report.hpp"
#include "experiments/recall/recall_selection.hpp"
#include "experiments/recall/recall_training.hpp"
#include "io/input_error.hpp"
#include "io/output_directory.hpp"
#include "io/text_file.hpp"

namespace cpm {

namespace {

const char* const kSettingsFile = "study_settings.txt";

// The settings every run depends on, one per line. A restart may add sizes, arms, normalisations,
// D_φ, grid points and seeds (each run is keyed by them), but must not change these.
std::string settings_fingerprint(const RecallConfig& c) {
  const RecallTaskConfig& t = c.task;
  const RecallModelConfig& m = c.model;
  const RecallTrainingConfig& r = c.training;
  const RecallPhaseAConfig& p = c.phase_a;
  std::ostringstream o;
  o.precision(17);
  o << "data.dataset = " << name_of(t.dataset) << "\ndata.key_symbols = " << t.key_symbols
    << "\ndata.value_symbols = " << t.value_symbols << "\ndata.embedding = " << t.embedding
    << "\ndata.vocabulary = " << t.vocabulary << "\ndata.alpha = " << t.alpha
    << "\ndata.random_non_queries = " << t.random_non_queries
    << "\ndata.train_examples = " << t.train_examples
    << "\ndata.validation_examples = " << t.validation_examples
    << "\ndata.test_examples = " << t.test_examples << "\nmodel.d_model = " << m.d_model
    << "\nmodel.heads = " << m.heads << "\nmodel.layers = " << m.layers
    << "\nmodel.d_ff = " << m.d_ff << "\nmodel.qk_tied = " << m.qk_tied
    << "\nmodel.short_convolution = " << m.short_convolution
    << "\nmodel.position_embedding = " << m.position_embedding
    << "\nmodel.feature_epsilon = " << m.feature_epsilon
    << "\nmodel.particle_init = " << m.particle_init << "\nmodel.antithetic = " << m.antithetic
    << "\ntraining.steps = " << r.steps << "\ntraining.batch_size = " << r.batch_size
    << "\ntraining.learning_rate = " << r.learning_rate
    << "\ntraining.warmup_steps = " << r.warmup_steps
    << "\ntraining.min_learning_rate_ratio = " << r.min_learning_rate_ratio
    << "\ntraining.weight_decay = " << r.weight_decay << "\ntraining.clip_norm = " << r.clip_norm
    << "\ntraining.drop_step = " << r.drop_step << "\ntraining.drop_factor = " << r.drop_factor
    << "\ntraining.eval_every = " << r.eval_every
    << "\ntraining.early_stop_accuracy = " << r.early_stop_accuracy
    << "\nphase_a.after_steps = " << p.after_steps << "\nphase_a.examples = " << p.examples
    << "\nphase_a.gamma = " << p.gamma << "\nphase_a.radius = " << (p.radius ? *p.radius : -1.0)
    << "\nphase_a.dynamics = " << name_of(p.dynamics.integrator) << ' '
    << name_of(p.dynamics.minimizer) << ' ' << p.dynamics.beta << ' ' << p.dynamics.step << ' '
    << p.dynamics.steps << ' ' << p.dynamics.tolerance << ' ' << p.dynamics.max_iterations
    << "\nphase_a.interaction = " << static_cast<int>(p.interaction.kernel.kind) << ' '
    << p.interaction.kernel.s << ' ' << p.interaction.kernel.epsilon << ' '
    << p.interaction.kernel.kappa << ' ' << name_of(p.interaction.method)
    << "\nphase_a.repulsion_fraction = " << p.repulsion_fraction << '\n';
  return o.str();
}

// The settings of a build before normalise_keys became a list held its one value among them.
const std::string kOlderNormalisation = "model.normalise_keys = ";

// Refuses a restart whose configuration changes a setting the recorded runs depend on. Returns
// the normalisation of the runs recorded without one (an earlier build's single normalise_keys;
// none when the settings do not name it).
RecallNormalisation check_restart_settings(const std::string& folder, const std::string& now) {
  const std::string path = folder + "/" + kSettingsFile;
  if (!std::filesystem::exists(path))
    throw InputError(path + ": missing (a --restart needs the stopped study's folder)");
  RecallNormalisation older = RecallNormalisation::none;
  auto lines = [&](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(kOlderNormalisation, 0) == 0) {
        const std::string name = line.substr(kOlderNormalisation.size());
        if (!is_name_of<RecallNormalisation>(name))
          throw InputError(path + ": unknown normalisation in '" + line + "'");
        older = enum_from_name<RecallNormalisation>(name);
        continue;
      }
      out.push_back(line);
    }
    return out;
  };
  const std::vector<std::string> before = lines(read_text_file(path)), after = lines(now);
  for (std::size_t i = 0; i < std::max(before.size(), after.size()); ++i) {
    const std::string a = i < before.size() ? before[i] : "", b = i < after.size() ? after[i] : "";
    if (a != b)
      throw InputError(path + ": the stopped study ran with '" + a + "', this configuration has '" +
                       b +
                       "' (a restart may only add sizes, arms, normalisations, features, "
                       "bandwidths, targets or seeds)");
  }
  return older;
}

struct PlannedRun {
  RecallVariant variant;
  int budget = 0;
  RecallArmSetting setting;
  int size_index = 0;
  std::uint64_t seed = 0;
};

// Every run, in the order of the study: size, arm, normalisation, D_φ, grid point, seed.
std::vector<PlannedRun> plan_runs(const RecallConfig& c) {
  std::vector<PlannedRun> plan;
  for (int size = 0; size < c.task.sizes(); ++size)
    for (const std::string& name : c.variants)
      for (RecallNormalisation normalisation :
           recall_normalisations(c, parse_recall_variant(name))) {
        RecallVariant variant = parse_recall_variant(name);
        variant.normalisation = normalisation;
        const std::vector<int> budgets = variant.particles ? c.model.features : std::vector<int>{0};
        const auto grid = c.arm_grids.find(name);
        const RecallArmGrid own = grid == c.arm_grids.end() ? RecallArmGrid{} : grid->second;
        const std::vector<double> bandwidths = variant.scale_sensitive()
                                                   ? recall_bandwidths(c, name, normalisation)
                                                   : std::vector<double>{1.0};
        const std::vector<AlignmentTarget> targets =
            variant.kernel ? own.targets.value_or(c.phase_a.targets)
                           : std::vector<AlignmentTarget>{AlignmentTarget::none};
        const std::vector<double>& rates = recall_learning_rates(c, name);
        for (int budget : budgets)
          for (double tau : bandwidths)
            for (AlignmentTarget target : targets)
              for (double rate : rates)
                for (std::uint64_t seed : c.seeds)
                  plan.push_back({variant, budget, {tau, target, rate}, size, seed});
      }
  return plan;
}

std::string planned_key(const RecallConfig& c, const PlannedRun& p) {
  RecallRun r;
  r.variant = p.variant.name;
  r.normalisation = p.variant.normalisation;
  r.feature_budget = p.variant.particles ? p.budget : 0;
  r.size = c.task.dataset == RecallTask::mqar ? c.task.lengths[p.size_index]
                                              : c.task.pairs[p.size_index];
  r.setting = p.setting;
  r.seed = p.seed;
  return recall_run_key(r);
}

// Trains the planned runs in order, taking those of `kept` as they are; records each new one in
// the journal as it finishes (a stopped study keeps it).
std::vector<RecallRun> train_plan(const RecallConfig& config, const std::vector<PlannedRun>& plan,
                                  const std::vector<RecallRun>& kept, RecallJournal& journal,
                                  const RecallTrainingOptions& training) {
  // The trained softmax networks the @softmax arms start from, by (size, seed).
  std::map<std::pair<int, std::uint64_t>, std::vector<float>> teachers;
  std::vector<RecallRun> runs;
  std::size_t reused = 0;
  for (const PlannedRun& p : plan) {
    if (reused < kept.size() && recall_run_key(kept[reused]) == planned_key(config, p)) {
      runs.push_back(kept[reused++]);
      continue;
    }
    RecallTrainingOptions o = training;
    const std::pair<int, std::uint64_t> teacher_key{p.size_index, p.seed};
    if (p.variant.from_softmax) {          // the teacher: softmax at its grid's first learning rate
      if (!teachers.count(teacher_key)) {  // trained again if its run was recorded earlier
        RecallTrainingOptions t = training;
        t.trained = &teachers[teacher_key];
        run_recall_arm(
            config, parse_recall_variant("softmax"), 0,
            {1.0, AlignmentTarget::none, recall_learning_rates(config, "softmax").front()},
            p.size_index, p.seed, t);
      }
      o.start = &teachers[teacher_key];
    } else if (p.variant.name == "softmax" &&
               p.setting.learning_rate == recall_learning_rates(config, "softmax").front()) {
      o.trained = &teachers[teacher_key];
    }
    runs.push_back(run_recall_arm(config, p.variant, p.budget, p.setting, p.size_index, p.seed, o));
    journal.add(runs.back());
  }
  return runs;
}

}  // namespace

std::vector<RecallRun> run_recall_study(const RecallConfig& config, const CommandOptions& options) {
  const std::string& dir = config.output_directory;
  const std::string fingerprint = settings_fingerprint(config);
  std::map<std::string, RecallRun> recorded;
  if (!options.restart.empty()) {
    const RecallNormalisation older = check_restart_settings(options.restart, fingerprint);
    for (RecallRun& r : read_recall_journal(options.restart, older))
      recorded[recall_run_key(r)] = r;
  }
  const bool same_folder = !options.restart.empty() && std::filesystem::exists(dir) &&
                           std::filesystem::equivalent(options.restart, dir);
  if (!same_folder) prepare_output_directory(dir, options.overwrite);
  std::ofstream(dir + "/" + kSettingsFile) << fingerprint;

  const std::vector<PlannedRun> plan = plan_runs(config);
  std::vector<RecallRun> kept;
  for (const PlannedRun& p : plan) {
    const auto it = recorded.find(planned_key(config, p));
    if (it != recorded.end() && it->second.pairs == config.task.pairs[p.size_index])
      kept.push_back(it->second);
  }
  RecallJournal journal(dir, kept);

  const StopRequestHandler stop_handler;
  RecallTrainingOptions training;
  training.progress = options.progress;
  training.how_to_continue =
      "continue with: cpm recall " + config.source + " --output " + dir + " --restart " + dir;
  std::vector<RecallRun> runs;
  try {
    runs = train_plan(config, plan, kept, journal, training);
  } catch (const StopRequested& stop) {  // inside a run, or while drawing its particles
    throw StopRequested(stop.signal(), training.how_to_continue);
  }
  select_recall_settings(runs);
  write_recall_table(dir, runs);
  write_recall_summary(dir + "/summary.md", runs);
  draw_recall_figure(dir + "/capacity.png", runs);
  std::cout << read_text_file(dir + "/summary.md");
  return runs;
}

}  // namespace cpm
