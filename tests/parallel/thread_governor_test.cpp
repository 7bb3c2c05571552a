// The governor's choice, fed step times of a machine whose load is known: it must settle on the
// faster count, follow a change of load, spend at most its probing budget on the slower count,
// and leave the OpenMP maximum as it found it.
#include "parallel/thread_governor.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <functional>

namespace cpm {
namespace {

// Runs `steps` steps whose time is `seconds(threads)`; returns the total time.
double run(ThreadGovernor& governor, int steps, const std::function<double(int)>& seconds) {
  double total = 0.0;
  for (int s = 0; s < steps; ++s) {
    const int threads = governor.begin_step();
    EXPECT_EQ(omp_get_max_threads(), threads);
    const double t = seconds(threads);
    governor.end_step(t);
    total += t;
  }
  return total;
}

class ThreadGovernorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = omp_get_max_threads();
    omp_set_num_threads(2);
  }
  void TearDown() override { omp_set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_F(ThreadGovernorTest, QuietMachineKeepsEveryThreadAndProbesWithinBudget) {
  ThreadGovernor governor;
  ASSERT_EQ(governor.capacity(), 2);
  const auto quiet = [](int threads) { return threads == 2 ? 1.0e-3 : 1.8e-3; };
  const double total = run(governor, 20000, quiet);
  EXPECT_EQ(governor.current(), 2);
  EXPECT_LE(governor.switches(), 1);  // one if the last governor ended on one thread
  // Probes cost at most the budget (plus the steps before the first probe backs off).
  EXPECT_LT(total, 20000 * 1.0e-3 * (1.0 + 2 * ThreadGovernor::kProbeBudget));
  EXPECT_GT(governor.probes(), 0);
}

TEST_F(ThreadGovernorTest, BusyMachineMovesToOneThreadAndStaysNearItsSpeed) {
  ThreadGovernor governor;
  // Beside another busy process: a team of two stalls at its barriers, 60 times slower.
  const auto busy = [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; };
  const double total = run(governor, 5000, busy);
  EXPECT_EQ(governor.current(), 1);
  EXPECT_LE(governor.switches(), 1);
  // Never more than 1.3 times one thread's time, the settling steps included.
  EXPECT_LT(total, 1.3 * 5000 * 1.0e-3);
}

TEST_F(ThreadGovernorTest, FollowsTheLoadWhenItChanges) {
  ThreadGovernor governor;
  run(governor, 1000, [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; });
  ASSERT_EQ(governor.current(), 1);
  // The other process ends: one thread alone runs faster than it did, and two faster still.
  run(governor, 1000, [](int threads) { return threads == 2 ? 0.3e-3 : 0.55e-3; });
  EXPECT_EQ(governor.current(), 2);
}

TEST_F(ThreadGovernorTest, NoisyTiesDoNotFlap) {
  ThreadGovernor governor;
  int k = 0;
  // Equal speeds with ±5 % noise: switching needs a confirmed 10 % gain, so it never happens.
  run(governor, 5000, [&k](int) { return 1.0e-3 * (1.0 + 0.05 * ((k++ % 3) - 1)); });
  EXPECT_EQ(governor.switches(), 0);
}

TEST_F(ThreadGovernorTest, RestoresTheMaximumAndSizesScratchForTheLargestTeam) {
  {
    ThreadGovernor governor;
    run(governor, 50, [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; });
    EXPECT_EQ(omp_get_max_threads(), 1);  // between steps: the count it runs on
    EXPECT_EQ(thread_capacity(), 2);      // scratch still fits a team of two
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
}

TEST_F(ThreadGovernorTest, OneThreadMachineNeverProbes) {
  omp_set_num_threads(1);
  ThreadGovernor governor;
  run(governor, 100, [](int) { return 1e-3; });
  EXPECT_EQ(governor.probes(), 0);
  EXPECT_EQ(governor.steps_on(1), 100);
}

}  // namespace
}  // namespace cpm
