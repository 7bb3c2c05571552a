// The kernel-concentration study (experiments/frequencies/kernel_concentration.hpp): the i.i.d.
// closed forms against Monte Carlo, the tail and speed analysis on errors of known law, the gas
// at small and large βλ, and the result's independence of the thread count.
#include "experiments/frequencies/kernel_concentration.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>

#include "experiments/frequencies/approximation_points.hpp"
#include "experiments/frequencies/iid_kernel_tails.hpp"
#include "experiments/frequencies/kernel_approximation.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

KernelConcentrationConfig small_config(const std::string& directory) {
  KernelConcentrationConfig c;
  c.features.dims = {2};
  c.features.points = 24;
  c.features.output_directory = directory;
  c.features.repulsion.steps = 300;
  c.features.repulsion.step = 0.01;
  c.ns = {8, 16};
  c.replicas = 40;
  c.betas = {2.0};
  c.betas_per_particle = {1.0};
  c.deltas = {0.1, 0.2, 0.3};
  c.bootstrap = 50;
  return c;
}

// The Frobenius errors of `replicas` sets of N frequencies drawn as `request` says.
std::vector<double> errors(FeatureRequest request, const Eigen::MatrixXd& x, int replicas) {
  std::vector<double> f(replicas);
#pragma omp parallel for
  for (int r = 0; r < replicas; ++r) {
    FeatureRequest mine = request;
    mine.replica = static_cast<std::uint64_t>(r);
    f[r] = kernel_errors(x, generate_features(mine), mine.sigma).frobenius;
  }
  return f;
}

double mean_square(const std::vector<double>& f) {
  double sum = 0.0;
  for (double v : f) sum += v * v;
  return sum / static_cast<double>(f.size());
}

// E f² = Σ Var cos(ωᵀΔ) / (N ‖K‖²_F) exactly for i.i.d. frequencies, and McDiarmid's bound lies
// above the measured tail.
TEST(KernelConcentration, IidMeanSquareErrorAndMcDiarmidBoundHold) {
  KernelConcentrationConfig c = small_config("");
  c.features.sigma = 0.8;
  const Eigen::MatrixXd x = ApproximationPoints(c.features).points(3, false);
  const IidKernelTails theory(x, c.features.sigma);
  FeatureRequest request;
  request.n = 32;
  request.dim = 3;
  request.sigma = c.features.sigma;
  const std::vector<double> f = errors(request, x, 600);
  // f² has a standard deviation about √2 times its mean (a sum of squares of nearly Gaussian
  // terms); 5 standard errors of 600 draws.
  const double expected = theory.scaled_mean_square() / request.n;
  EXPECT_NEAR(mean_square(f) / expected, 1.0, 5.0 * std::sqrt(2.0 / 600.0));
  for (double delta : {0.1, 0.2, 0.3, 0.5}) {
    const double measured =
        std::count_if(f.begin(), f.end(), [&](double v) { return v > delta; }) / 600.0;
    EXPECT_LE(measured, theory.tail_bound(request.n, delta) + 0.02) << delta;
  }
  EXPECT_DOUBLE_EQ(theory.tail_bound(request.n, 0.0), 1.0);
  EXPECT_GT(theory.mcdiarmid_factor(), 0.0);
  EXPECT_LE(theory.mcdiarmid_factor(), 1.0);
}

// At βλ → 0 the compensated gas is i.i.d. from p (its Langevin dynamics is an Ornstein–Uhlenbeck
// process with stationary law p): the same mean square error. At large βλ it is far more regular.
TEST(KernelConcentration, GasIsIidAtWeakCouplingAndConcentratesAtStrongCoupling) {
  KernelConcentrationConfig c = small_config("");
  const Eigen::MatrixXd x = ApproximationPoints(c.features).points(2, false);
  const IidKernelTails theory(x, 1.0);
  FeatureRequest request;
  request.method = FeatureMethod::coulomb;
  request.n = 32;
  request.dim = 2;
  request.repulsion.steps = 400;
  request.repulsion.step = 0.01;
  request.repulsion.beta = 1e-4;
  EXPECT_NEAR(mean_square(errors(request, x, 400)) / (theory.scaled_mean_square() / request.n), 1.0,
              5.0 * std::sqrt(2.0 / 400.0));
  request.n = 16;
  request.repulsion.steps = 200;
  request.repulsion.beta = 2.0 * request.n;  // βλ = 32
  const double strong = mean_square(errors(request, x, 60));
  const double iid = theory.scaled_mean_square() / request.n;
  EXPECT_LT(strong, 0.5 * iid) << strong / iid;
}

// Errors whose tails are known exactly: P(f > δ) = k/R by construction, and −log P = c N² gives
// the speed 2.
TEST(KernelConcentration, TailsRatesAndSpeedOfKnownErrors) {
  KernelConcentrationConfig c = small_config("");
  c.methods = {FeatureMethod::iid};
  c.ns = {10, 20, 40};
  c.replicas = 4000;
  c.deltas = {0.5};
  c.bootstrap = 200;
  KernelConcentrationResult result;
  result.ensembles = feature_ensembles(c);
  ASSERT_EQ(result.ensembles.size(), 1u);
  result.errors.assign(1, {});
  for (Eigen::Index n : c.ns) {
    const double p = std::exp(-0.003 * n * n);
    const int exceeding = static_cast<int>(std::lround(p * c.replicas));
    std::vector<double> f(c.replicas, 0.25);
    for (int r = 0; r < exceeding; ++r) f[r] = 0.75;
    result.errors[0].push_back(f);
  }
  analyse_kernel_tails(c, ApproximationPoints(c.features).points(2, false), result);
  ASSERT_EQ(result.tails.size(), 3u);
  for (const KernelTail& t : result.tails) {
    EXPECT_NEAR(t.probability, std::exp(-0.003 * t.n * t.n), 0.5 / c.replicas);
    EXPECT_LE(t.probability_low, t.probability);
    EXPECT_GE(t.probability_high, t.probability);
    EXPECT_NEAR(t.rate_squared, 0.003, 0.003 * 0.05);
    EXPECT_NEAR(t.rate, t.rate_squared * t.n, 1e-12);
    EXPECT_TRUE(std::isfinite(t.bound));
  }
  ASSERT_EQ(result.speeds.size(), 2u);  // the tail at δ = 0.5, then the variance
  EXPECT_EQ(result.speeds[1].statistic, "variance");
  EXPECT_EQ(result.speeds[0].points, 3);
  EXPECT_NEAR(result.speeds[0].speed, 2.0, 0.05);
  EXPECT_LT(result.speeds[0].speed_low, result.speeds[0].speed_high);
}

// f = 1/2 ± 1/N: Var f = (1/N²) R/(R − 1), the variance speed is 2.
TEST(KernelConcentration, VarianceSpeedOfKnownFluctuations) {
  KernelConcentrationConfig c = small_config("");
  c.methods = {FeatureMethod::iid};
  c.ns = {10, 20, 40, 80};
  c.replicas = 100;
  KernelConcentrationResult result;
  result.ensembles = feature_ensembles(c);
  result.errors.assign(1, {});
  for (Eigen::Index n : c.ns) {
    std::vector<double> f(c.replicas);
    for (int r = 0; r < c.replicas; ++r) f[r] = 0.5 + (r % 2 ? 1.0 : -1.0) / static_cast<double>(n);
    result.errors[0].push_back(f);
  }
  analyse_kernel_tails(c, ApproximationPoints(c.features).points(2, false), result);
  const KernelSpeed& v = result.speeds.back();
  EXPECT_EQ(v.statistic, "variance");
  EXPECT_EQ(v.points, 4);
  EXPECT_NEAR(v.speed, 2.0, 1e-9);
  EXPECT_LE(v.speed_low, 2.0);
  EXPECT_GE(v.speed_high, 2.0);
}

TEST(KernelConcentration, EnsemblesAndLabels) {
  const KernelConcentrationConfig c = small_config("");
  const std::vector<FeatureEnsemble> e = feature_ensembles(c);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].label(), "iid");
  EXPECT_EQ(e[1].label(), "coulomb beta=2");
  EXPECT_EQ(e[2].label(), "coulomb beta=1N");
  EXPECT_EQ(e[2].beta_at(16), 16.0);
  EXPECT_EQ(e[1].beta_at(16), 2.0);
}

// The whole study: its tables, and the same errors with 1 and 2 threads.
TEST(KernelConcentration, StudyWritesItsTablesAndDoesNotDependOnTheThreadCount) {
  const std::filesystem::path dir = testing_support::fresh_path("kernel_concentration");
  static const MpiEnvironment mpi;  // MPI starts once per process
  omp_set_num_threads(1);
  const KernelConcentrationResult one =
      run_kernel_concentration(mpi, small_config((dir / "one").string()),
                               {.overwrite = false, .progress = false, .restart = ""});
  omp_set_num_threads(2);
  const KernelConcentrationResult two =
      run_kernel_concentration(mpi, small_config((dir / "two").string()),
                               {.overwrite = false, .progress = false, .restart = ""});
  EXPECT_EQ(one.errors, two.errors);
  ASSERT_EQ(one.errors.size(), 3u);
  EXPECT_EQ(one.tails.size(), 3u * 2u * 3u);
  EXPECT_EQ(one.speeds.size(), 3u * (3u + 1u));
  for (const char* file :
       {"kernel_errors.csv", "kernel_tails.csv", "kernel_speeds.csv", "kernel_concentration.h5"})
    EXPECT_TRUE(std::filesystem::exists(dir / "one" / file)) << file;
  // Tails fall with δ.
  for (std::size_t i = 0; i + 1 < one.tails.size(); ++i)
    if (one.tails[i].ensemble == one.tails[i + 1].ensemble &&
        one.tails[i].n == one.tails[i + 1].n) {
      EXPECT_GE(one.tails[i].probability, one.tails[i + 1].probability);
    }
}

}  // namespace
}  // namespace cpm
