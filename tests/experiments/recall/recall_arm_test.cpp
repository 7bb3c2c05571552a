// One arm of the recall study: the same seed gives the same run wherever the heap puts its
// buffers, and kernel-favor passes through vanilla-favor's state (the shared checkpoint) before
// Phase A moves its particles towards the targets.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "config/recall_config.hpp"
#include "experiments/recall/recall_study.hpp"

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
          "[phase_a]\nafter_steps = 40\nexamples = 64\ntarget = \"" +
          target + "\"\n[phase_a.dynamics]\nsteps = 30\n",
      "test.toml");
}

TEST(RecallArm, SameSeedSameRunWhereverTheBuffersLand) {
  const RecallConfig c = small_retrieval(80);
  const RecallVariant v = parse_recall_variant("vanilla-favor");
  const RecallRun first = run_recall_arm(c, v, 32, 0, 5, false);
  std::vector<std::unique_ptr<char[]>> shift;  // moves every later heap block
  for (int n = 1; n < 40; n += 3) shift.push_back(std::make_unique<char[]>(n));
  const RecallRun second = run_recall_arm(c, v, 32, 0, 5, false);
  EXPECT_EQ(first.loss, second.loss);
  EXPECT_EQ(first.accuracy, second.accuracy);
  EXPECT_EQ(first.correct, second.correct);
}

TEST(RecallArm, KernelArmIsTheVanillaRunUntilPhaseAMovesItsParticles) {
  // With Phase A's steps too small to move a float, the kernel arm is the vanilla run: same
  // particles drawn, same training up to the shared checkpoint and after it.
  RecallConfig c = small_retrieval(80);
  c.phase_a.dynamics.integrator = "langevin";
  c.phase_a.dynamics.step = 1e-12;
  const RecallRun vanilla =
      run_recall_arm(c, parse_recall_variant("vanilla-favor"), 32, 0, 3, false);
  const RecallRun still = run_recall_arm(c, parse_recall_variant("kernel-favor"), 32, 0, 3, false);
  EXPECT_EQ(still.correct, vanilla.correct);
  EXPECT_EQ(still.loss, vanilla.loss);
  EXPECT_EQ(vanilla.phase_a_kl_before, 0.0);
  EXPECT_GT(still.phase_a_kl_before, 0.0);
  EXPECT_NEAR(still.phase_a_kl_after, still.phase_a_kl_before, 1e-6 * still.phase_a_kl_before);
}

TEST(RecallArm, PhaseALowersTheDivergenceFromEitherTarget) {
  for (const std::string target : {"matching", "softmax"}) {
    const RecallRun kernel = run_recall_arm(small_retrieval(80, target),
                                            parse_recall_variant("kernel-favor"), 32, 0, 3, false);
    EXPECT_GT(kernel.phase_a_kl_before, 0.0) << target;
    EXPECT_LT(kernel.phase_a_kl_after, 0.5 * kernel.phase_a_kl_before) << target;
  }
}

TEST(RecallArm, MqarKernelArmAlignsEveryLayer) {
  const RecallConfig c = parse_recall_config(
      "[data]\ndataset = \"mqar\"\nvocabulary = 64\nlengths = [16]\npairs = [2]\n"
      "train_examples = 256\nvalidation_examples = 32\ntest_examples = 32\n"
      "[model]\nd_model = 16\nheads = 2\nfeatures = [16]\n"
      "[training]\nsteps = 30\nbatch_size = 8\neval_every = 10\n"
      "[phase_a]\nafter_steps = 10\nexamples = 4\n[phase_a.dynamics]\nsteps = 20\n",
      "test.toml");
  const RecallRun kernel = run_recall_arm(c, parse_recall_variant("kernel-favor"), 16, 0, 2, false);
  EXPECT_GT(kernel.phase_a_kl_before, 0.0);
  EXPECT_LT(kernel.phase_a_kl_after, kernel.phase_a_kl_before);
}

}  // namespace
}  // namespace cpm
