// A finished run of `cpm kernel` as the replica checkpoint keeps it: the record comes back field
// for field (through the checkpoint file too), and values that are not a record are refused.
#include "experiments/kernel/kernel_run_record.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "experiments/studies/replica_checkpoint.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

// Every field set, each to its own value (a swapped pair of fields would show).
KernelRunResult sample_run() {
  KernelRunResult r;
  r.method = "learned-no-repulsion";
  r.n = 3;
  r.gamma = 0.3;
  r.beta = std::numeric_limits<double>::infinity();
  r.steps = 50;
  r.l2 = 1e-3;
  r.learning = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5};
  r.validation = {0.81, 0.41, 0.21, 0.11, 0.61};
  r.test = {0.82, 0.42, 0.22, 0.12, 0.62};
  r.test_calibrated = {0.83, 0.43, 0.23, 0.13, 0.63};
  r.temperature = 1.25;
  r.alignment_fit = 0.031;
  r.alignment_validation = 0.029;
  r.effective_rank = 2.75;
  r.distances = {0.5, 1.75};
  r.norms.resize(3);
  r.norms << 0.1, std::nextafter(1.0, 2.0), 2.3;
  r.grid = {{0.3, 3.0, 25, 1e-3, 0.7, 0.55}, {1.0, 10.0, 50, 1e-2, 0.75, 0.5}};
  r.curve = {{25, 0.7, 0.71}, {50, 0.75, 0.74}};
  r.trace = {{0, 0.01, {0.4, 1.6}}, {10, 0.02, {0.45, 1.7}}, {20, 0.03, {0.5, 1.75}}};
  r.seconds = 0.125;
  r.label_noise = 0.1;
  r.seed = 0x123456789abcdef1u;  // beyond 2⁵³: kept exactly
  return r;
}

void expect_same_metrics(const ClassificationMetrics& a, const ClassificationMetrics& b) {
  EXPECT_EQ(a.accuracy, b.accuracy);
  EXPECT_EQ(a.log_loss, b.log_loss);
  EXPECT_EQ(a.brier, b.brier);
  EXPECT_EQ(a.ece, b.ece);
  EXPECT_EQ(a.mcc, b.mcc);
}

void expect_same_run(const KernelRunResult& a, const KernelRunResult& b) {
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.gamma, b.gamma);
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.l2, b.l2);
  EXPECT_EQ(a.learning.gamma, b.learning.gamma);
  EXPECT_EQ(a.learning.alignment_drift, b.learning.alignment_drift);
  EXPECT_EQ(a.learning.anchor_precision, b.learning.anchor_precision);
  EXPECT_EQ(a.learning.lambda, b.learning.lambda);
  EXPECT_EQ(a.learning.repulsion_ratio_initial, b.learning.repulsion_ratio_initial);
  EXPECT_EQ(a.learning.repulsion_ratio_final, b.learning.repulsion_ratio_final);
  EXPECT_EQ(a.learning.anchor_ratio_initial, b.learning.anchor_ratio_initial);
  expect_same_metrics(a.validation, b.validation);
  expect_same_metrics(a.test, b.test);
  expect_same_metrics(a.test_calibrated, b.test_calibrated);
  EXPECT_EQ(a.temperature, b.temperature);
  EXPECT_EQ(a.alignment_fit, b.alignment_fit);
  EXPECT_EQ(a.alignment_validation, b.alignment_validation);
  EXPECT_EQ(a.effective_rank, b.effective_rank);
  EXPECT_EQ(a.distances.min, b.distances.min);
  EXPECT_EQ(a.distances.mean, b.distances.mean);
  EXPECT_EQ(a.norms, b.norms);
  ASSERT_EQ(a.grid.size(), b.grid.size());
  for (std::size_t k = 0; k < a.grid.size(); ++k) {
    EXPECT_EQ(a.grid[k].gamma, b.grid[k].gamma);
    EXPECT_EQ(a.grid[k].beta, b.grid[k].beta);
    EXPECT_EQ(a.grid[k].step, b.grid[k].step);
    EXPECT_EQ(a.grid[k].l2, b.grid[k].l2);
    EXPECT_EQ(a.grid[k].accuracy, b.grid[k].accuracy);
    EXPECT_EQ(a.grid[k].log_loss, b.grid[k].log_loss);
  }
  ASSERT_EQ(a.curve.size(), b.curve.size());
  for (std::size_t k = 0; k < a.curve.size(); ++k) {
    EXPECT_EQ(a.curve[k].step, b.curve[k].step);
    EXPECT_EQ(a.curve[k].validation_accuracy, b.curve[k].validation_accuracy);
    EXPECT_EQ(a.curve[k].test_accuracy, b.curve[k].test_accuracy);
  }
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (std::size_t k = 0; k < a.trace.size(); ++k) {
    EXPECT_EQ(a.trace[k].step, b.trace[k].step);
    EXPECT_EQ(a.trace[k].alignment, b.trace[k].alignment);
    EXPECT_EQ(a.trace[k].distances.min, b.trace[k].distances.min);
    EXPECT_EQ(a.trace[k].distances.mean, b.trace[k].distances.mean);
  }
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.label_noise, b.label_noise);
  EXPECT_EQ(a.seed, b.seed);
}

TEST(KernelRunRecord, ARunComesBackFieldForField) {
  const KernelRunResult run = sample_run();
  expect_same_run(kernel_run_from_record(kernel_run_record(run)), run);
}

TEST(KernelRunRecord, AFixedFeatureRunComesBackThroughTheCheckpointFile) {
  KernelRunResult run = sample_run();
  run.method = "iid";
  run.gamma = run.beta = std::numeric_limits<double>::quiet_NaN();  // no (γ, β) chosen
  run.steps = 0;
  run.grid.resize(1);
  run.curve.clear();
  run.trace.clear();
  const auto dir = testing::fresh_directory("kernel_run_record");
  const std::string path = (dir / "replicas.checkpoint").string();
  ReplicaCheckpoint c{"kernel", 1, 4, 0, {}};
  c.rows[2] = kernel_run_record(run);
  write_replica_checkpoint(path, c);
  KernelRunResult back = kernel_run_from_record(read_replica_checkpoint(path).rows.at(2));
  EXPECT_TRUE(std::isnan(back.gamma) && std::isnan(back.beta));
  run.gamma = run.beta = back.gamma = back.beta = 0.0;
  expect_same_run(back, run);
}

TEST(KernelRunRecord, ValuesThatAreNotARecordAreRefused) {
  const std::vector<double> record = kernel_run_record(sample_run());
  std::vector<double> shorter(record.begin(), record.end() - 1),
      longer = record, bad_length = record, bad_method = record;
  longer.push_back(0.0);
  bad_length[1] = 1e18;
  bad_method[4] = 99.0;
  for (const auto& values : {std::vector<double>{}, shorter, longer, bad_length, bad_method})
    EXPECT_THROW(kernel_run_from_record(values), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
