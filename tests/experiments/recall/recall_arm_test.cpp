// One arm of the recall study: the same seed gives the same run wherever the heap puts its
// buffers, and kernel-favor passes through vanilla-favor's state (the shared checkpoint) before
// Phase A moves its particles towards the targets.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "config/recall_config.hpp"
#include "experiments/recall/recall_arms.hpp"
#include "experiments/recall/recall_training.hpp"

namespace cpm {
namespace {

RecallConfig small_retrieval(int steps, const std::string& target = "matching") {
  return parse_recall_config(
      "[data]\ndataset = \"associative_retrieval\"\npairs = [12]\ntrain_examples = 2000\n"
      "validation_examples = 64\ntest_examples = 128\n"
      "[model]\nd_model = 16\nfeatures = [32]\n"
      "[training]\nsteps = " +
          std::to_string(steps) +
          "\nbatch_size = 16\neval_every = 20\n"
          "[phase_a]\nafter_steps = 40\nexamples = 64\ntargets = [\"" +
          target + "\"]\n[phase_a.dynamics]\nsteps = 30\n",
      "test.toml");
}

const RecallTrainingOptions kQuiet{false, nullptr, nullptr, ""};

// The first grid point: τ = 1 and the first Phase A target.
RecallArmSetting setting(const RecallConfig& c) {
  return {1.0, c.phase_a.targets.front()};
}

TEST(RecallArm, SameSeedSameRunWhereverTheBuffersLand) {
  const RecallConfig c = small_retrieval(80);
  const RecallVariant v = parse_recall_variant("vanilla-favor");
  const RecallRun first = run_recall_arm(c, v, 32, setting(c), 0, 5, kQuiet);
  std::vector<std::unique_ptr<char[]>> shift;  // moves every later heap block
  for (int n = 1; n < 40; n += 3) shift.push_back(std::make_unique<char[]>(n));
  const RecallRun second = run_recall_arm(c, v, 32, setting(c), 0, 5, kQuiet);
  EXPECT_EQ(first.loss, second.loss);
  EXPECT_EQ(first.accuracy, second.accuracy);
  EXPECT_EQ(first.correct, second.correct);
}

TEST(RecallArm, KernelArmIsTheVanillaRunUntilPhaseAMovesItsParticles) {
  // With Phase A's steps too small to move a float, the kernel arm is the vanilla run: same
  // particles drawn, same training up to the shared checkpoint and after it.
  RecallConfig c = small_retrieval(80);
  c.phase_a.dynamics.integrator = Integrator::langevin;
  c.phase_a.dynamics.step = 1e-12;
  const RecallRun vanilla =
      run_recall_arm(c, parse_recall_variant("vanilla-favor"), 32, setting(c), 0, 3, kQuiet);
  const RecallRun still =
      run_recall_arm(c, parse_recall_variant("kernel-favor"), 32, setting(c), 0, 3, kQuiet);
  EXPECT_EQ(still.correct, vanilla.correct);
  EXPECT_EQ(still.loss, vanilla.loss);
  EXPECT_EQ(vanilla.phase_a_kl_before, 0.0);
  EXPECT_GT(still.phase_a_kl_before, 0.0);
  EXPECT_NEAR(still.phase_a_kl_after, still.phase_a_kl_before, 1e-6 * still.phase_a_kl_before);
}

TEST(RecallArm, PhaseALowersTheDivergenceFromEveryTarget) {
  for (const std::string target : {"matching", "softmax", "capacity"}) {
    const RecallConfig c = small_retrieval(80, target);
    const RecallRun kernel =
        run_recall_arm(c, parse_recall_variant("kernel-favor"), 32, setting(c), 0, 3, kQuiet);
    EXPECT_GT(kernel.phase_a_kl_before, 0.0) << target;
    EXPECT_LT(kernel.phase_a_kl_after, 0.5 * kernel.phase_a_kl_before) << target;
  }
}

// An arm started from a trained softmax network holds its parameters at step 0: with no training
// step it scores what the teacher's weights give it, and the kernel arm's Phase A then aligns to
// the teacher's own attention (a KL that drops). The bandwidth enters only through φ's input.
TEST(RecallArm, ArmsStartFromTheSoftmaxTeacherAndAlignToItsWeights) {
  RecallConfig c = small_retrieval(80, "softmax");
  std::vector<float> teacher;
  RecallTrainingOptions train = kQuiet;
  train.trained = &teacher;
  const RecallRun softmax = run_recall_arm(c, parse_recall_variant("softmax"), 0,
                                           {1.0, AlignmentTarget::none, 0.0}, 0, 4, train);
  ASSERT_FALSE(teacher.empty());
  RecallTrainingOptions start = kQuiet;
  start.start = &teacher;
  const RecallRun taught = run_recall_arm(c, parse_recall_variant("kernel-favor@softmax"), 32,
                                          {0.35, AlignmentTarget::softmax, 0.0}, 0, 4, start);
  EXPECT_GT(taught.phase_a_kl_before, 0.0);
  EXPECT_LT(taught.phase_a_kl_after, taught.phase_a_kl_before);
  EXPECT_NEAR(taught.effective_bandwidth, 0.35, 0.35);  // τ times the particles' length ratio
  // The vanilla arm from the same teacher, and from scratch: the start changes the run.
  const RecallRun from_teacher =
      run_recall_arm(c, parse_recall_variant("vanilla-favor@softmax"), 32,
                     {0.35, AlignmentTarget::none, 0.0}, 0, 4, start);
  const RecallRun from_scratch = run_recall_arm(c, parse_recall_variant("vanilla-favor"), 32,
                                                {0.35, AlignmentTarget::none, 0.0}, 0, 4, kQuiet);
  EXPECT_NE(from_teacher.loss, from_scratch.loss);
  EXPECT_GT(softmax.accuracy, 0.5);
}

// The ReBased-style arm: its block holds d′ projection rows of unit length, then γ = 1 and β = 0
// on d′ entries (one row each for d′ ≤ d_key), and D_φ = 1 + d′(d′+1)/2 fills the budget from
// below (32 → d′ = 7, D_φ = 29); the run trains them with the network and changes them.
TEST(RecallArm, RebasedStartsWithUnitRowsAndTheIdentityAffine) {
  const RecallConfig c = small_retrieval(60);
  const RecallVariant v = parse_recall_variant("rebased");
  const int dim = recall_feature_dim(v, 32, 16);
  ASSERT_EQ(dim, 29);
  RetrievalArm arm(c, v, dim, {1.0, AlignmentTarget::none, 0.0}, 0, 2);
  ASSERT_EQ(arm.model().particle_rows(), 7 + 2);
  const std::vector<float>& block = arm.model().particles();
  for (int k = 0; k < 7; ++k) {
    double norm = 0.0;
    for (int a = 0; a < 16; ++a) norm += double(block[k * 16 + a]) * block[k * 16 + a];
    EXPECT_NEAR(norm, 1.0, 1e-6) << k;
  }
  for (int a = 0; a < 16; ++a) {
    EXPECT_EQ(block[7 * 16 + a], a < 7 ? 1.0f : 0.0f) << a;
    EXPECT_EQ(block[8 * 16 + a], 0.0f) << a;
  }
  const RecallRun run = run_recall_arm(c, v, 32, {1.0, AlignmentTarget::none, 0.0}, 0, 2, kQuiet);
  EXPECT_EQ(run.feature_dim, 29);
  EXPECT_GT(run.accuracy, 0.0);
}

// A tiny MQAR study; `model` adds keys to [model].
RecallConfig tiny_mqar(const std::string& model = "") {
  return parse_recall_config(
      "[data]\ndataset = \"mqar\"\nvocabulary = 64\nlengths = [16]\npairs = [2]\n"
      "train_examples = 256\nvalidation_examples = 32\ntest_examples = 32\n"
      "[model]\nd_model = 16\nheads = 2\nfeatures = [16]\n" +
          model +
          "[training]\nsteps = 30\nbatch_size = 8\neval_every = 10\n"
          "[phase_a]\nafter_steps = 10\nexamples = 4\n[phase_a.dynamics]\nsteps = 20\n",
      "test.toml");
}

TEST(RecallArm, MqarKernelArmAlignsEveryLayer) {
  const RecallConfig c = tiny_mqar();
  const RecallRun kernel =
      run_recall_arm(c, parse_recall_variant("kernel-favor"), 16, setting(c), 0, 2, kQuiet);
  EXPECT_GT(kernel.phase_a_kl_before, 0.0);
  EXPECT_LT(kernel.phase_a_kl_after, kernel.phase_a_kl_before);
}

// The anchor's hybrid: a convolution layer has no attention to align, so Phase A aligns the
// attention layer alone; taylor and projected dpfp fill D_φ from below.
TEST(RecallArm, MqarHybridAlignsItsAttentionLayerAndFillsTheBudgetFromBelow) {
  const RecallConfig c = tiny_mqar("short_convolution = 3\nposition_embedding = false\n");
  const RecallRun kernel =
      run_recall_arm(c, parse_recall_variant("kernel-favor"), 16, setting(c), 0, 2, kQuiet);
  EXPECT_GT(kernel.phase_a_kl_before, 0.0);
  EXPECT_LT(kernel.phase_a_kl_after, kernel.phase_a_kl_before);
  const RecallRun rebased =
      run_recall_arm(c, parse_recall_variant("rebased"), 16, setting(c), 0, 2, kQuiet);
  EXPECT_EQ(rebased.feature_dim, 16);  // d′ = 5: 1 + 15
  const RecallRun taylor =
      run_recall_arm(c, parse_recall_variant("taylor"), 16, setting(c), 0, 2, kQuiet);
  EXPECT_EQ(taylor.feature_dim, 15);  // d′ = 4 within 16
  EXPECT_EQ(taylor.feature_budget, 16);
  const RecallRun dpfp =
      run_recall_arm(c, parse_recall_variant("projected-dpfp2"), 16, setting(c), 0, 2, kQuiet);
  EXPECT_EQ(dpfp.feature_dim, 16);  // d′ = 4
}

}  // namespace
}  // namespace cpm
