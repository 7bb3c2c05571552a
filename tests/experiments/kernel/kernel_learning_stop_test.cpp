// A stop signal (core/stop_request.hpp) ends the Langevin learning at its next step: `cpm kernel`
// stops inside a learning run, not after it.
#include <gtest/gtest.h>

#include <csignal>

#include "core/feature_initialisation.hpp"
#include "core/stop_request.hpp"
#include "experiments/kernel/kernel_learning.hpp"
#include "learning/synthetic_tasks.hpp"

namespace cpm {
namespace {

TEST(KernelLearningStop, ASignalStopsTheLearningAtTheNextStep) {
  SyntheticTask task;
  task.kind = SyntheticTask::Kind::variance;
  task.dim = 3;
  task.train_size = 100;
  const DataSplit data = make_synthetic_task(task, 1);
  auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
  LearningSettings s;
  s.dynamics.steps = 1000;
  s.record_every = 10;
  std::vector<TrainingRecord> trace;
  const StopRequestHandler stop_handler;
  const auto signal_at_step_20 = [](const TrainingRecord& r) {
    if (r.step == 20) std::raise(SIGTERM);
  };
  try {
    learn_particles(x, alignment_targets(data.train.y, 2), FeatureMap::rff_pairs(),
                    gaussian_features(8, 3, 1.0, 2), s, &trace, signal_at_step_20);
    ADD_FAILURE() << "not stopped";
  } catch (const StopRequested& stop) {
    EXPECT_EQ(stop.signal(), SIGTERM);
  }
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.back().step, 20);
}

}  // namespace
}  // namespace cpm
