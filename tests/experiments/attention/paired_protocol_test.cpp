// The paired protocol: the two arms of a paired run start from bit-identical checkpoints and take
// the same number of steps, Phase A's repulsion is calibrated against its alignment drift, a
// control takes the same budget, and Phase A's stop rule ends a plateau before the step cap.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/random_stream.hpp"
#include "experiments/attention/paired_protocol.hpp"
#include "tests/scratch_directory.hpp"
#include "transformer/classifier_checkpoint.hpp"
#include "transformer/trainer.hpp"

namespace cpm {
namespace {

// Sequences of random words 3..10 whose label is whether word 2 occurs.
SequenceSet word_presence_sequences(int n, std::uint64_t seed) {
  SequenceSet data;
  RandomStream s(seed, RandomPurpose::test_inputs, 0, 0);
  for (int i = 0; i < n; ++i) {
    std::vector<int> t(3 + static_cast<int>(s.uniform() * 6));
    for (auto& v : t) v = 3 + static_cast<int>(s.uniform() * 8);
    const int label = i % 2;
    if (label) t[static_cast<std::size_t>(s.uniform() * t.size())] = 2;
    data.tokens.push_back(t);
    data.labels.push_back(label);
  }
  return data;
}

AttentionTask synthetic_task() {
  AttentionTask task;
  task.dataset = "synthetic";
  task.evaluation_split = "test";
  task.classes = 2;
  task.max_length = 8;
  task.vocabulary_size = 12;
  task.train = word_presence_sequences(96, 3);
  task.evaluation = word_presence_sequences(48, 5);
  return task;
}

TrainConfig small_config(const std::string& variant) {
  TrainConfig config;
  config.model.d_model = 16;
  config.model.heads = 2;
  config.model.layers = 2;
  config.model.d_ff = 16;
  config.model.features = 16;  // m > d_head = 8, or every Ω₁ is a linear map of Ω₀
  config.model.variant = parse_attention_variant(variant);
  config.training.epochs = 2;  // E′
  config.training.batch_size = 16;
  config.training.warmup_steps = 2;
  config.training.seed = 4;
  config.phase_a.warmup_epochs = 2;  // E
  config.phase_a.sequences = 96;
  config.phase_a.queries_and_keys = true;
  config.phase_a.normalised = true;
  config.phase_a.dynamics.steps = 400;  // the cap
  config.phase_a.tolerance = 1e-3;
  config.phase_a.check_every = 5;
  config.phase_a.interaction.kernel = InteractionKernel::mollified(7.0, 0.25);  // d_head − 2 < s
  config.phase_a.repulsion_fraction = 0.2;
  config.evaluation.robustness = true;
  return config;
}

TEST(PairedProtocol, BothArmsStartFromTheSameCheckpointAndTakeTheSameSteps) {
  const AttentionTask task = synthetic_task();
  const TrainConfig config = small_config("kernel-porf-softplus");
  const std::string dir = testing_support::fresh_path("paired_map");
  const PairedRun run = run_paired_map(config, task, dir, false);

  // The checkpoint on disk is what both arms started from, bit for bit.
  const ModelCheckpoint saved = load_model_checkpoint(dir + "/checkpoint.h5");
  TransformerClassifier<float> reloaded(checkpoint_shape(saved, "checkpoint"), 16, 8);
  load_weights(reloaded, saved, "checkpoint");
  EXPECT_EQ(run.vanilla.start_digest, model_digest(reloaded));
  EXPECT_EQ(run.kernel.start_digest, model_digest(reloaded));

  const std::int64_t per_epoch = steps_per_epoch(task.train.size(), 16);
  EXPECT_EQ(run.vanilla.pretrain_steps, 2 * per_epoch);
  EXPECT_EQ(run.kernel.pretrain_steps, 2 * per_epoch);
  EXPECT_EQ(run.vanilla.steps, 2 * per_epoch);
  EXPECT_EQ(run.kernel.steps, run.vanilla.steps);
  EXPECT_EQ(run.vanilla.arm, "vanilla-porf-softplus");
  EXPECT_EQ(run.kernel.arm, "kernel-porf-softplus");
  EXPECT_TRUE(run.vanilla.phase_a.empty());
  ASSERT_EQ(run.kernel.phase_a.size(), 4u);
  EXPECT_GT(run.kernel.phase_a_seconds, 0.0);
  for (const auto& h : run.kernel.phase_a) {
    // λ was set from the drifts: the repulsion is 0.2 of the alignment drift at the start.
    EXPECT_NEAR(h.repulsion_ratio_start, 0.2, 1e-9);
    EXPECT_GT(h.lambda, 0.0);
    EXPECT_GT(h.after, h.before);
    EXPECT_GT(h.displacement, 0.0);
    EXPECT_GT(h.fit_residual, 1e-3);
    EXPECT_GT(h.unabsorbed, 1e-3);
    EXPECT_GT(h.steps, 0);
    EXPECT_LE(h.steps, 400);
    EXPECT_TRUE(h.converged || h.steps == 400);
    std::printf(
        "  layer %d head %d: A %.3e -> %.3e, %d steps%s, moved %.3f of %.2f, fit "
        "residual %.4f, unabsorbed %.3f, repulsion/alignment %.2f -> %.2f\n",
        h.layer, h.head, h.before, h.after, h.steps, h.converged ? " (converged)" : "",
        h.displacement, h.norm, h.fit_residual, h.unabsorbed, h.repulsion_ratio_start,
        h.repulsion_ratio_end);
  }
  // The two arms differ only by Phase A, which did change the model.
  EXPECT_NE(run.kernel.evaluation.front().result.log_loss,
            run.vanilla.evaluation.front().result.log_loss);
  for (const char* file :
       {"/checkpoint.h5", "/pretrain_log.csv", "/vanilla/metrics.csv", "/vanilla/predictions.csv",
        "/kernel/phase_a.csv", "/kernel/training_log.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir + file)) << file;
  EXPECT_EQ(run.kernel.evaluation.front().predictions.size(), 48);

  // A control takes the same budget.
  const ArmResult uniform =
      run_control(small_config("uniform"), task, testing_support::fresh_path("uniform"), false);
  EXPECT_EQ(uniform.pretrain_steps, 2 * per_epoch);
  EXPECT_EQ(uniform.steps, 2 * per_epoch);
  EXPECT_EQ(uniform.arm, "uniform");
}

TEST(PhaseA, TheStopRuleEndsAPlateauBeforeTheCap) {
  const AttentionTask task = synthetic_task();
  TrainConfig config = small_config("kernel-softmaxfeat");
  TransformerClassifier<float> model = make_attention_model(config, task);
  for (auto& p : model.parameters()) p *= 10.0f;  // keys of order one
  config.phase_a.dynamics.steps = 5000;
  config.phase_a.dynamics.step = 0.2;
  config.phase_a.gamma = 1.0;
  config.phase_a.tolerance = 1e-2;
  const auto heads = run_phase_a(model, task.train, 2, config.phase_a, 1, 16, false);
  for (const auto& h : heads) {
    EXPECT_TRUE(h.converged) << h.layer << " " << h.head;
    EXPECT_LT(h.steps, 5000);
    EXPECT_EQ(h.steps % 5, 0);
  }
}

}  // namespace
}  // namespace cpm
