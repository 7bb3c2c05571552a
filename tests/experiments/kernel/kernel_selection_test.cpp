// Model selection never reads the test rows: with every test input replaced by NaN the chosen
// hyper-parameters and every validation score are bit for bit the same; only the test metrics
// change. Also: the validation rows are training rows, a seeded split that leaves the test rows
// alone.
#include "experiments/kernel/kernel_selection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "learning/held_out.hpp"
#include "learning/synthetic_tasks.hpp"

namespace cpm {
namespace {

KernelConfig tiny_config() {
  return parse_kernel_config(
      "[data]\ntask = \"radial\"\ndim = 3\ntrain_size = 120\ntest_size = 60\n"
      "[features]\nmap = \"rff-pairs\"\nn = 8\n"
      "[alignment]\nobjective = \"alignment\"\n"
      "[repulsion]\nkernel = \"mollified\"\ns = 2.0\nepsilon = 0.1\ndrift_fraction = 0.1\n"
      "[dynamics]\nsteps = 6\nstep = 0.2\n"
      "[selection]\ngamma = [0.5, 2.0]\nbeta = [2.0, 20.0]\nl2 = [1e-3, 1e-2, 1e-1]\n"
      "checkpoints = [3, 6]\n"
      "[baselines]\nmethods = [\"iid\", \"importance\", \"learned\", \"learned-null\"]\npool = "
      "32\n",
      "test.toml");
}

DataSplit radial_split(std::uint64_t seed) {
  SyntheticTask t;
  t.kind = SyntheticTask::Kind::radial;
  t.dim = 3;
  t.train_size = 120;
  t.test_size = 60;
  t.label_noise = 0.1;
  return make_synthetic_task(t, seed);
}

void expect_same_choice(const MethodOutcome& a, const MethodOutcome& b) {
  const auto same = [](double u, double v) { return (std::isnan(u) && std::isnan(v)) || u == v; };
  EXPECT_TRUE(same(a.gamma, b.gamma)) << a.method;
  EXPECT_TRUE(same(a.beta, b.beta)) << a.method;
  EXPECT_EQ(a.steps, b.steps) << a.method;
  EXPECT_EQ(a.l2, b.l2) << a.method;
  EXPECT_EQ(a.validation.accuracy, b.validation.accuracy) << a.method;
  EXPECT_EQ(a.validation.log_loss, b.validation.log_loss) << a.method;
  EXPECT_EQ(a.temperature, b.temperature) << a.method;
  ASSERT_EQ(a.grid.size(), b.grid.size()) << a.method;
  for (std::size_t i = 0; i < a.grid.size(); ++i) {
    EXPECT_EQ(a.grid[i].accuracy, b.grid[i].accuracy) << a.method << " grid point " << i;
    EXPECT_EQ(a.grid[i].log_loss, b.grid[i].log_loss) << a.method << " grid point " << i;
  }
}

TEST(KernelSelection, ChoicesAndValidationScoresDoNotDependOnTheTestRows) {
  const KernelConfig config = tiny_config();
  const DataSplit split = radial_split(4);
  DataSplit poisoned = split;
  poisoned.test.x.setConstant(std::numeric_limits<double>::quiet_NaN());
  const KernelRunData clean = prepare_run_data(config, split, 4);
  const KernelRunData dirty = prepare_run_data(config, poisoned, 4);
  const ImportancePool pool_clean = make_importance_pool(config, clean, 4);
  const ImportancePool pool_dirty = make_importance_pool(config, dirty, 4);
  MethodOutcome learned_clean, learned_dirty;
  for (const std::string method : {"iid", "coulomb", "importance", "learned", "learned-null"}) {
    MethodContext a{&config, &clean, 4, &pool_clean, &learned_clean, {}};
    MethodContext b{&config, &dirty, 4, &pool_dirty, &learned_dirty, {}};
    const MethodOutcome x = evaluate_method(a, method, 8);
    const MethodOutcome y = evaluate_method(b, method, 8);
    expect_same_choice(x, y);
    EXPECT_TRUE(std::isfinite(x.test.accuracy)) << method;
    EXPECT_TRUE(std::isnan(y.test.log_loss)) << method;  // the poison reached the test metrics only
    if (method == std::string("learned")) {
      EXPECT_EQ(x.grid.size(),
                2u * 2u * 2u + 2u);  // (γ, β, checkpoint) at the reference l2, then l2
      EXPECT_FALSE(std::isnan(x.gamma));
      EXPECT_GT(x.learning.lambda, 0.0);
      EXPECT_NEAR(x.learning.repulsion_ratio_initial, 0.1, 1e-12);
      learned_clean = x;
      learned_dirty = y;
    }
  }
}

TEST(KernelSelection, ValidationRowsAreASeededSplitOfTheTrainingRows) {
  const DataSplit split = radial_split(7);
  const ValidationSplit v = split_validation(split.train, 0.2, 7);
  EXPECT_EQ(v.validation.size(), 24);
  EXPECT_EQ(v.fit.size(), 96);
  for (std::size_t r = 0; r < v.validation_rows.size(); ++r)
    EXPECT_EQ(v.validation.x.row(static_cast<Eigen::Index>(r)),
              split.train.x.row(v.validation_rows[r]));
  EXPECT_EQ(split_validation(split.train, 0.2, 7).validation_rows, v.validation_rows);
  EXPECT_NE(split_validation(split.train, 0.2, 8).validation_rows, v.validation_rows);
}

TEST(KernelSelection, EffectiveRankOfKnownSpectra) {
  EXPECT_NEAR(effective_rank(Eigen::MatrixXd::Identity(5, 5)), 5.0, 1e-12);
  Eigen::MatrixXd rank_one = Eigen::VectorXd::LinSpaced(6, 1, 6) * Eigen::RowVectorXd::Ones(4);
  EXPECT_NEAR(effective_rank(rank_one), 1.0, 1e-4);
  Eigen::MatrixXd two = Eigen::MatrixXd::Zero(4, 3);
  two(0, 0) = 3.0;
  two(1, 1) = 1.0;  // p = (3/4, 1/4)
  EXPECT_NEAR(effective_rank(two), std::exp(-(0.75 * std::log(0.75) + 0.25 * std::log(0.25))),
              1e-12);
}

}  // namespace
}  // namespace cpm
