#include "experiments/recall/recall_training.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/stop_request.hpp"
#include "experiments/trainer_settings.hpp"
#include "io/input_error.hpp"
#include "io/progress.hpp"

namespace cpm {

namespace {

// Runs Phase A on the arm and records it in the run; returns the RMS length ratio of the
// particles after over before (averaged over heads).
template <class Arm>
double run_phase_a(Arm& arm, bool teacher, int step, RecallRun& run, Progress& progress) {
  const std::vector<RecallHeadAlignment> heads = arm.phase_a(teacher);
  double norm = 0.0, moved = 0.0, ratio = 0.0;
  for (const RecallHeadAlignment& h : heads) {
    const double share = 1.0 / static_cast<double>(heads.size());
    run.phase_a_kl_before += share * h.before;
    run.phase_a_kl_after += share * h.after;
    norm += share * h.norm;
    moved += share * h.displacement;
    ratio += share * (h.norm > 0.0 ? h.norm_after / h.norm : 1.0);
  }
  std::ostringstream detail;
  detail.precision(3);
  detail << "phase A: KL(target ‖ linear weights) " << run.phase_a_kl_before << " → "
         << run.phase_a_kl_after << ", particles moved " << moved << " (RMS norm " << norm << ", × "
         << ratio << ")";
  progress.heartbeat(step, detail.str());
  return ratio;
}

// The trainer with the configured schedule, clipping and rate drop, an epoch's remainder smaller
// than a batch dropped; trainable particles take Adam steps of their own. Validation every
// eval_every steps and at the end; the state with the best validation accuracy (ties: lower loss)
// is scored on the test split. Kernel arms run Phase A after phase_a.after_steps steps, or before
// the first step when they start from a trained softmax network (the teacher's weights are then the
// target).
template <class Arm>
void optimise(Arm& arm, const RecallConfig& c, const RecallVariant& variant, std::uint64_t seed,
              const RecallTrainingOptions& options, RecallRun& run, Progress& progress) {
  const RecallTrainingConfig& t = c.training;
  auto& model = arm.model();
  if (options.start) {
    if (options.start->size() > model.parameters().size())
      throw std::invalid_argument("the teacher's parameters do not fit the arm's model");
    std::copy(options.start->begin(), options.start->end(), model.parameters().begin());
  }
  TrainerSettings settings = trainer_settings(t, t.batch_size, seed);
  if (run.setting.learning_rate > 0.0) settings.learning_rate = run.setting.learning_rate;
  settings.drop_step = t.drop_step;
  settings.drop_factor = t.drop_factor;
  settings.drop_remainder = true;
  Trainer trainer(model, settings, t.steps, arm.train_size());
  if (variant.trainable) trainer.train_particles(model.particles(), model.particle_gradients());
  double norm_ratio = 1.0;
  const bool teacher = variant.kernel && variant.from_softmax;
  if (teacher) norm_ratio = run_phase_a(arm, true, 0, run, progress);
  std::vector<float> best = model.parameters(), best_particles = model.particles();
  RecallScore best_validation;
  best_validation.accuracy = -1.0;  // below any measured accuracy
  const auto batch_step = [&arm](const std::size_t* rows, int count, std::int64_t step) {
    return BatchLoss{arm.train_step(rows, count, step)};
  };
  for (int step = 1; step <= t.steps; ++step) {
    if (const int signal = stop_signal()) {
      progress.interrupt();
      throw StopRequested(signal, options.how_to_continue);
    }
    trainer.step(batch_step);
    const double smoothed = trainer.smoothed_loss();
    if (variant.kernel && !teacher && step == c.phase_a.after_steps)
      norm_ratio = run_phase_a(arm, false, step, run, progress);
    if (step % t.eval_every == 0 || step == t.steps) {
      const RecallScore v = arm.evaluate(RecallSplit::validation);
      if (v.accuracy > best_validation.accuracy ||
          (v.accuracy == best_validation.accuracy && v.loss < best_validation.loss)) {
        best_validation = v;
        best = model.parameters();
        best_particles = model.particles();
        run.best_step = step;
      }
      std::ostringstream detail;
      detail.precision(3);
      detail << "loss " << smoothed << ", validation accuracy " << v.accuracy;
      progress.update(step, detail.str());
      if (t.early_stop_accuracy > 0.0 && v.accuracy >= t.early_stop_accuracy) break;
    } else if (progress.heartbeat_due()) {
      progress.heartbeat(step, "loss " + std::to_string(smoothed));
    }
  }
  model.parameters() = best;
  model.particles() = best_particles;  // trainable, or moved by Phase A
  run.validation_accuracy = best_validation.accuracy;
  run.validation_loss = best_validation.loss;
  run.effective_bandwidth = arm.effective_bandwidth(norm_ratio);
  const RecallScore test = arm.evaluate(RecallSplit::test, true);
  run.accuracy = test.accuracy;
  run.loss = test.loss;
  run.correct = test.correct;
  run.capacity = test.capacity;
  if (options.trained) *options.trained = best;
}

}  // namespace

RecallRun run_recall_arm(const RecallConfig& config, const RecallVariant& variant,
                         int feature_budget, const RecallArmSetting& setting, int size_index,
                         std::uint64_t seed, const RecallTrainingOptions& options) {
  const bool mqar = config.task.dataset == RecallTask::mqar;
  RecallRun run;
  run.task = config.task.dataset;
  run.variant = variant.name;
  run.normalisation = variant.normalisation;
  run.feature_budget = variant.particles ? feature_budget : 0;
  run.setting = setting;
  run.seed = seed;
  run.pairs = config.task.pairs[size_index];
  run.size = mqar ? config.task.lengths[size_index] : run.pairs;
  const auto start = std::chrono::steady_clock::now();
  const int head_size = mqar ? config.model.d_model / config.model.heads : config.model.d_model;
  const int feature_dim = recall_feature_dim(variant, feature_budget, head_size);
  std::ostringstream label;
  label << name_of(run.task) << ' ' << run.variant;
  if (variant.normalisation != RecallNormalisation::none)
    label << " [" << name_of(variant.normalisation) << ']';
  if (variant.attention == AttentionKind::linear) {
    label << " D=" << feature_dim;
    if (variant.scale_sensitive()) label << " τ=" << setting.bandwidth;
    if (setting.target != AlignmentTarget::none) label << ' ' << name_of(setting.target);
  }
  if (config.training.learning_rates.size() > 1) label << " rate " << setting.learning_rate;
  label << (mqar ? " L=" : " S=") << run.size << " seed " << seed;
  Progress bar(label.str(), config.training.steps, options.progress);
  try {
    if (mqar) {
      MqarArm arm(config, variant, feature_dim, setting, size_index, seed);
      run.feature_dim =
          variant.attention == AttentionKind::linear ? arm.model().shape().features : 0;
      optimise(arm, config, variant, seed, options, run, bar);
    } else {
      RetrievalArm arm(config, variant, feature_dim, setting, size_index, seed);
      run.feature_dim =
          variant.attention == AttentionKind::linear ? arm.model().shape().features : 0;
      optimise(arm, config, variant, seed, options, run, bar);
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(config.source + ": " + run.variant + ": " + e.what());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream detail;
  detail.precision(3);
  detail << "test accuracy " << run.accuracy << ", loss " << run.loss;
  bar.finish(detail.str());
  return run;
}

}  // namespace cpm
