// The governor's choice, fed step times and team checks of a machine whose load is known: it must
// settle on the faster count, follow a change of load, spend at most its probing budget on the
// slower count, run no step on a team whose check finds it stalled, and leave the OpenMP maximum
// as it found it.
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

// Stand-ins for the team's check: a team that keeps its cores, and one that waits at its barriers
// for most of the check's window.
TeamStallCheck free_team(int) {
  return {1e-4, 0.0};
}
TeamStallCheck stalled_team(int) {
  return {12e-3, 0.6};
}
TeamStallCheck slow_free_team(int) {
  return {10e-3, 0.0};
}
int stalled_checks_left = 0;
TeamStallCheck stalled_at_first(int threads) {
  return stalled_checks_left-- > 0 ? stalled_team(threads) : free_team(threads);
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
  ThreadGovernor governor(0, free_team);
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
  ThreadGovernor governor(0, free_team);
  // Beside another busy process: a team of two stalls at its barriers, 60 times slower.
  const auto busy = [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; };
  const double total = run(governor, 5000, busy);
  EXPECT_EQ(governor.current(), 1);
  EXPECT_LE(governor.switches(), 1);
  // Never more than 1.3 times one thread's time, the settling steps included.
  EXPECT_LT(total, 1.3 * 5000 * 1.0e-3);
}

TEST_F(ThreadGovernorTest, FollowsTheLoadWhenItChanges) {
  ThreadGovernor governor(0, free_team);
  run(governor, 1000, [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; });
  ASSERT_EQ(governor.current(), 1);
  // The other process ends: one thread alone runs faster than it did, and two faster still.
  run(governor, 1000, [](int threads) { return threads == 2 ? 0.3e-3 : 0.55e-3; });
  EXPECT_EQ(governor.current(), 2);
}

TEST_F(ThreadGovernorTest, NoisyTiesDoNotFlap) {
  ThreadGovernor governor(0, free_team);
  int k = 0;
  // Equal speeds with ±5 % noise: switching needs a confirmed 10 % gain, so it never happens.
  run(governor, 5000, [&k](int) { return 1.0e-3 * (1.0 + 0.05 * ((k++ % 3) - 1)); });
  EXPECT_EQ(governor.switches(), 0);
}

TEST_F(ThreadGovernorTest, RestoresTheMaximumAndSizesScratchForTheLargestTeam) {
  {
    ThreadGovernor governor(0, free_team);
    run(governor, 50, [](int threads) { return threads == 2 ? 60e-3 : 1.0e-3; });
    EXPECT_EQ(omp_get_max_threads(), 1);  // between steps: the count it runs on
    EXPECT_EQ(thread_capacity(), 2);      // scratch still fits a team of two
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
}

TEST_F(ThreadGovernorTest, OneThreadMachineNeverProbes) {
  omp_set_num_threads(1);
  ThreadGovernor governor(0, free_team);
  run(governor, 100, [](int) { return 1e-3; });
  EXPECT_EQ(governor.probes(), 0);
  EXPECT_EQ(governor.steps_on(1), 100);
}

TEST_F(ThreadGovernorTest, StalledTeamRunsNoStepAndCostsLittle) {
  ThreadGovernor governor(0, stalled_team);
  // Beside busy processes a team step costs ten steps on one thread, a check of it a third of one.
  const auto busy = [](int threads) { return threads == 2 ? 0.4 : 0.04; };
  const double total = run(governor, 100, busy);
  EXPECT_EQ(governor.steps_on(2), 0);
  EXPECT_GE(governor.checks(), 1);
  EXPECT_LT(total + 12e-3 * static_cast<double>(governor.checks()), 1.05 * 100 * 0.04);
}

TEST_F(ThreadGovernorTest, PassedCheckStillLetsTheStepsDecide) {
  // The check may miss a stall (the team kept its cores for the check's window): the team's probe
  // step then loses, and the governor stays on one thread.
  stalled_checks_left = 1;
  ThreadGovernor governor(0, stalled_at_first);
  run(governor, 100, [](int threads) { return threads == 2 ? 0.4 : 0.04; });
  EXPECT_EQ(governor.current(), 1);
  EXPECT_EQ(governor.checks(), 2);
  EXPECT_EQ(governor.steps_on(2), 1);
}

TEST_F(ThreadGovernorTest, QuietMachineReturnsToTheTeamAfterAFailedCheck) {
  stalled_checks_left = 1;  // a busy moment at the start sends the first steps to one thread
  ThreadGovernor governor(0, stalled_at_first);
  run(governor, 2000, [](int threads) { return threads == 2 ? 1.0e-3 : 1.8e-3; });
  EXPECT_GT(governor.steps_on(1), 0);
  EXPECT_EQ(governor.current(), 2);
  EXPECT_EQ(governor.switches(), 1);
}

TEST_F(ThreadGovernorTest, OneThreadSlowingDownAndBackIsNoChangeOfLoad) {
  // Beside busy processes one thread's steps swing between 40 and 80 ms as the others' load comes
  // and goes. Only load leaving the machine (steps faster than one thread's best) calls for a new
  // look at the team; the swings leave the checks on their backoff.
  ThreadGovernor governor(0, stalled_team);
  int step = 0;
  run(governor, 400, [&step](int) { return (step++ / 20) % 2 ? 0.08 : 0.04; });
  EXPECT_EQ(governor.steps_on(2), 0);
  EXPECT_LE(governor.checks(), 5);
}

TEST_F(ThreadGovernorTest, PassedChecksCountInTheProbingBudget) {
  // Steps of 0.2 ms, where one thread is a little faster than the team: every probe of the team
  // loses, and each follows a passed check of 10 ms, fifty steps' worth. The probes wait for the
  // check's cost too, so checks take at most the budget.
  ThreadGovernor governor(0, slow_free_team);
  const double steps =
      run(governor, 20000, [](int threads) { return threads == 2 ? 0.3e-3 : 0.2e-3; });
  EXPECT_EQ(governor.current(), 1);
  EXPECT_LT(10e-3 * static_cast<double>(governor.checks()), ThreadGovernor::kProbeBudget * steps);
}

TEST(TeamStallCheck, OneThreadNeverStallsAndATeamReportsAShare) {
  EXPECT_EQ(check_team_stalls(1).seconds, 0.0);
  const TeamStallCheck team = check_team_stalls(2);
  EXPECT_GE(team.seconds, kTeamCheckWindow);
  EXPECT_GE(team.stalled_share, 0.0);
  EXPECT_LE(team.stalled_share, 1.0);
}

}  // namespace
}  // namespace cpm
