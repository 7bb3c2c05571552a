// AdamW's vectorised update (transformer/adamw.hpp) against its formula evaluated in long double,
// over sizes below, at and above a register's width and mixed weight-decay flags; the clipping
// factor applied as it reads the gradients; any nonzero decay flag as 1; and independence of the
// thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <vector>

#include "transformer/adamw.hpp"

namespace cpm {
namespace {

struct Problem {
  std::vector<float> parameters;
  std::vector<std::vector<float>> gradients;  // one per step
  std::vector<unsigned char> decay;
};

Problem random_problem(int n, int steps) {
  std::mt19937 engine(static_cast<unsigned>(n));
  std::normal_distribution<double> normal;
  Problem p;
  for (int i = 0; i < n; ++i) {
    p.parameters.push_back(static_cast<float>(normal(engine)));
    p.decay.push_back(static_cast<unsigned char>(engine() % 3 == 0));
  }
  p.gradients.assign(steps, std::vector<float>(n));
  for (auto& g : p.gradients)
    for (auto& x : g) x = static_cast<float>(0.1 * normal(engine));
  return p;
}

constexpr AdamWSettings kSettings{2e-2, 0.9, 0.999, 1e-8, 0.1};

TEST(AdamW, VectorisedStepsFollowTheFormulaOnEverySize) {
  const double lr = kSettings.learning_rate, scale = 0.7;
  for (int n : {1, 3, 15, 16, 17, 33, 1023, 1024, 1025, 4099}) {
    Problem p = random_problem(n, 3);
    AdamW<float> optimiser(p.decay, kSettings);
    std::vector<long double> theta(p.parameters.begin(), p.parameters.end()), m(n), v(n);
    for (int t = 1; t <= 3; ++t) {
      optimiser.step(p.parameters, p.gradients[t - 1], lr, scale);
      const long double c1 = 1 - std::pow(0.9L, t), c2 = 1 - std::pow(0.999L, t);
      for (int i = 0; i < n; ++i) {
        const long double g = scale * static_cast<long double>(p.gradients[t - 1][i]);
        m[i] = 0.9L * m[i] + 0.1L * g;
        v[i] = 0.999L * v[i] + 0.001L * g * g;
        const long double step =
            (m[i] / c1) / (std::sqrt(v[i] / c2) + 1e-8L) + (p.decay[i] ? 0.1L * theta[i] : 0.0L);
        theta[i] -= lr * step;
      }
    }
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(p.parameters[i], static_cast<double>(theta[i]), 2e-6)
          << "n = " << n << ", parameter " << i << (p.decay[i] ? " (decay)" : "");
  }
}

TEST(AdamW, GradientScaleEqualsStepOnScaledGradients) {
  const int n = 1037;
  Problem p = random_problem(n, 2), q = p;
  AdamW<float> scaled(p.decay, kSettings), plain(q.decay, kSettings);
  const float scale = 0.37f;
  for (int t = 0; t < 2; ++t) {
    scaled.step(p.parameters, p.gradients[t], kSettings.learning_rate, scale);
    std::vector<float> g = q.gradients[t];
    for (auto& x : g) x *= scale;
    plain.step(q.parameters, g, kSettings.learning_rate);
  }
  EXPECT_EQ(p.parameters, q.parameters);
  EXPECT_EQ(scaled.first_moments(), plain.first_moments());
  EXPECT_EQ(scaled.second_moments(), plain.second_moments());
}

TEST(AdamW, AnyNonzeroFlagMeansWeightDecay) {
  const int n = 37;  // two registers of floats and a padded rest
  Problem p = random_problem(n, 2), q = p;
  for (int i = 0; i < n; ++i) p.decay[i] = static_cast<unsigned char>(q.decay[i] ? 1 + i * 7 : 0);
  AdamW<float> flagged(p.decay, kSettings), plain(q.decay, kSettings);
  for (int t = 0; t < 2; ++t) {
    flagged.step(p.parameters, p.gradients[t], kSettings.learning_rate);
    plain.step(q.parameters, q.gradients[t], kSettings.learning_rate);
  }
  EXPECT_EQ(p.parameters, q.parameters);
}

TEST(AdamW, ResultsDoNotDependOnTheThreadCount) {
  const int n = 70001;  // ranges of the threads end inside blocks and registers
  const int saved = omp_get_max_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    Problem p = random_problem(n, 2);
    AdamW<float> optimiser(p.decay, kSettings);
    for (int t = 0; t < 2; ++t)
      optimiser.step(p.parameters, p.gradients[t], kSettings.learning_rate, 0.5);
    results.push_back(p.parameters);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

}  // namespace
}  // namespace cpm
