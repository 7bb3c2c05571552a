#include "solvers/blocked_pair_sum.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <limits>

#include "tests/solvers/pair_sum_test_support.hpp"

namespace cpm {
namespace {

using test::evaluate;
using test::PairSumResult;

// Sizes around the SIMD width, within one block, and over many blocks with a ragged last one.
constexpr Eigen::Index kSizes[] = {1, 2, 7, 9, 100, 531};

TEST(BlockedPairSum, EqualsReferenceSumToRoundingForEveryKernelAndDimension) {
  for (int d : {1, 2, 3, 8}) {
    for (const InteractionKernel& kernel : test::every_kernel(d)) {
      auto fast = make_blocked_pair_sum(kernel), reference = make_reference_pair_sum(kernel);
      for (Eigen::Index n : kSizes) {
        const Eigen::MatrixXd x = test::random_points(n, d, 17 + n);
        const PairSumResult a = evaluate(*fast, x), b = evaluate(*reference, x);
        EXPECT_LE(test::relative_error(a.gradient, b.gradient), 1e-12)
            << kernel.describe() << " d=" << d << " n=" << n;
        EXPECT_LE(test::relative_error(a.energy, b.energy), 1e-12)
            << kernel.describe() << " d=" << d << " n=" << n;
        // Forces alone (no energy) take a separate loop instantiation.
        Eigen::MatrixXd forces_only(n, d);
        fast->compute(x, forces_only, nullptr);
        EXPECT_EQ(forces_only, a.gradient) << kernel.describe() << " d=" << d << " n=" << n;
      }
    }
  }
}

TEST(BlockedPairSum, ResultsAreBitwiseIndependentOfTheThreadCount) {
  const int threads = omp_get_max_threads();
  for (int d : {1, 2, 3, 8}) {
    for (const InteractionKernel& kernel :
         {InteractionKernel::power(0.5), InteractionKernel::log(), InteractionKernel::power(1.3)}) {
      auto sum = make_blocked_pair_sum(kernel);
      const Eigen::MatrixXd x = test::random_points(2051, d, 5);
      omp_set_num_threads(1);
      const PairSumResult one = evaluate(*sum, x);
      for (int t : {2, 3, 4}) {
        omp_set_num_threads(t);
        const PairSumResult many = evaluate(*sum, x);
        EXPECT_EQ(many.gradient, one.gradient)
            << kernel.describe() << " d=" << d << " threads=" << t;
        EXPECT_EQ(many.energy, one.energy) << kernel.describe() << " d=" << d << " threads=" << t;
      }
    }
  }
  omp_set_num_threads(threads);
}

// Σ_{k≠l} W(x_k − x_l) has ∂/∂x_k = 2 Σ_l ∇W(x_k − x_l) (W is even), so the gradient rows are half
// the derivative of the pair energy: checked coordinate by coordinate for a few particles, and
// along the gradient itself, where one pair of energies checks its length (OpenMM's test).
TEST(BlockedPairSum, GradientIsHalfTheFiniteDifferenceGradientOfThePairEnergy) {
  const Eigen::Index n = 61;
  for (int d : {1, 2, 3, 8}) {
    for (const InteractionKernel& kernel : test::every_kernel(d)) {
      auto sum = make_blocked_pair_sum(kernel);
      const Eigen::MatrixXd x = test::random_points(n, d, 3 + d);
      const PairSumResult r = evaluate(*sum, x);
      auto energy = [&](const Eigen::MatrixXd& y) { return evaluate(*sum, y).energy; };
      const double h = 1e-6;
      for (Eigen::Index k : {Eigen::Index{0}, Eigen::Index{30}, n - 1}) {
        for (int a = 0; a < d; ++a) {
          Eigen::MatrixXd xp = x, xm = x;
          xp(k, a) += h;
          xm(k, a) -= h;
          const double fd = (energy(xp) - energy(xm)) / (2 * h);
          EXPECT_NEAR(2 * r.gradient(k, a), fd, 1e-6 * (1 + std::abs(fd)))
              << kernel.describe() << " d=" << d << " k=" << k << " a=" << a;
        }
      }
      if (r.gradient.norm() == 0.0) continue;  // W ≡ 0
      // Move no particle by more than 1e-5 of the closest distance, where W varies fastest.
      double closest = std::numeric_limits<double>::infinity();
      for (Eigen::Index k = 0; k < n; ++k)
        for (Eigen::Index l = k + 1; l < n; ++l)
          closest = std::min(closest, (x.row(k) - x.row(l)).norm());
      const double step = 1e-5 * closest / r.gradient.rowwise().norm().maxCoeff();
      const double de = energy(x + step * r.gradient) - energy(x - step * r.gradient);
      const double expected = 4 * step * r.gradient.squaredNorm();
      EXPECT_NEAR(de, expected, 1e-6 * expected) << kernel.describe() << " d=" << d;
    }
  }
}

TEST(BlockedPairSum, SelfTermIsExcludedAndTwoParticlesGiveTheKernelItself) {
  Eigen::MatrixXd x(2, 3);
  x << 0.1, -0.2, 0.3,  //
      0.4, 0.2, -0.9;
  const Eigen::Vector3d z = (x.row(0) - x.row(1)).transpose();
  for (const InteractionKernel& kernel : test::every_kernel(3)) {
    auto sum = make_blocked_pair_sum(kernel);
    const PairSumResult r = evaluate(*sum, x);
    visit(kernel, [&](auto w) {
      EXPECT_NEAR(r.energy, 2 * kernel_value(w, z), 1e-14 * (1 + std::abs(r.energy)))
          << kernel.describe();
      const Eigen::Vector3d g = kernel_gradient(w, z);
      EXPECT_LE((r.gradient.row(0).transpose() - g).norm(), 1e-14 * (1 + g.norm()))
          << kernel.describe();
      EXPECT_LE((r.gradient.row(1).transpose() + g).norm(), 1e-14 * (1 + g.norm()))
          << kernel.describe();
    });
  }
}

}  // namespace
}  // namespace cpm
