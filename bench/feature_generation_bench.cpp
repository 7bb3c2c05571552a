// The cost of the feature generators (frequencies/feature_generator.hpp) at the target
// size, N = 4,096 frequencies in d = 16 (target: under 10 s on 2 cores for the coulomb gas), and
// what the time buys: the Gram-matrix error on 256 points against i.i.d. features from the same
// run.
//
//   pair_sum_16d_4096   one blocked pair sum (forces and energy) for W = −|z|, d = 16, against the
//                       reference loop on the same points (the ratio closes the line)
//   generators_16d_4096 every generator once, seed 1, the coulomb gas (s = −1, β = ∞) with 50,
//                       100 (the default) and 200 L-BFGS iterations: seconds, iterations, the
//                       Frobenius error and its ratio to iid
//
// Usage: feature_generation_bench [case …]   (no case: all of them)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/instruction_set.hpp"
#include "config/features_config.hpp"
#include "experiments/frequencies/approximation_points.hpp"
#include "experiments/frequencies/kernel_approximation.hpp"
#include "frequencies/feature_generator.hpp"
#include "solvers/blocked_pair_sum.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace cpm;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void pair_sum_16d_4096() {
  FeatureRequest r;
  r.n = 4096;
  r.dim = 16;
  const Eigen::MatrixXd x = generate_features(r);
  Eigen::MatrixXd gradient(x.rows(), x.cols());
  double energy = 0.0;
  auto time = [&](InteractionSum& sum) {
    sum.compute(x, gradient, &energy);  // warm-up: buffers sized
    const int repeats = 5;
    const auto start = Clock::now();
    for (int k = 0; k < repeats; ++k) sum.compute(x, gradient, &energy);
    return seconds_since(start) / repeats;
  };
  const auto blocked = make_blocked_pair_sum(InteractionKernel::linear());
  const auto reference = make_reference_pair_sum(InteractionKernel::linear());
  const double fast = time(*blocked), plain = time(*reference);
  std::printf("pair_sum_16d_4096    blocked %.4f s  reference %.4f s  ratio %.2fx\n", fast, plain,
              plain / fast);
}

void generators_16d_4096() {
  FeaturesStudyConfig config;
  const Eigen::MatrixXd points = ApproximationPoints(config).points(16, false);
  double iid_error = 0.0;
  const std::vector<std::pair<FeatureMethod, int>> runs = {
      {FeatureMethod::iid, 0},      {FeatureMethod::orthogonal, 0}, {FeatureMethod::sobol, 0},
      {FeatureMethod::halton, 0},   {FeatureMethod::coulomb, 50},   {FeatureMethod::coulomb, 100},
      {FeatureMethod::coulomb, 200}};
  for (const auto& [m, iterations] : runs) {
    FeatureRequest r;
    r.method = m;
    r.n = 4096;
    r.dim = 16;
    if (iterations > 0) r.repulsion.max_iterations = iterations;
    FeatureDiagnostics done;
    const auto start = Clock::now();
    const Eigen::MatrixXd omega = generate_features(r, &done);
    const double seconds = seconds_since(start);
    const double error = kernel_errors(points, omega, 1.0).frobenius;
    if (m == FeatureMethod::iid) iid_error = error;
    std::printf(
        "generators_16d_4096  %-10s %8.3f s  iterations %4d  frobenius %.4g  (%.2f x iid)\n",
        feature_method_name(m).c_str(), seconds, done.iterations, error, error / iid_error);
  }
}

}  // namespace

int main(int argc, char** argv) {
  print_instruction_set();
  const std::vector<std::pair<std::string, void (*)()>> cases = {
      {"pair_sum_16d_4096", pair_sum_16d_4096}, {"generators_16d_4096", generators_16d_4096}};
  std::vector<std::string> wanted(argv + 1, argv + argc);
  for (const auto& [name, run] : cases)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end()) run();
  return 0;
}
