// The contract of an interaction sum (solvers/interaction_sum.hpp), written once and run against
// every implementation, as OpenMM runs one test body on each of its platforms: the reference
// loop, the blocked SIMD sum (`direct`) and the particle-mesh sum (`mesh`, d ≤ 3, particles in a
// box), each for every kernel kind of test::every_kernel. The direct sum agrees with the
// reference to rounding; the mesh, on its default grid and near range, to its discretisation
// error, which sets its tolerances below.
#include "solvers/interaction_sum.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/particle_mesh_sum.hpp"
#include "tests/solvers/pair_sum_test_support.hpp"

namespace cpm {
namespace {

using test::evaluate;
using test::PairSumResult;

// One implementation and what it promises.
struct SumUnderTest {
  std::string name;
  std::vector<int> dims;            // the dimensions it handles
  std::vector<Eigen::Index> sizes;  // particle counts it is checked at, ascending
  Eigen::Index many;                // enough particles for several threads to share the work
  // Builds the sum for up to n particles inside [−1, 1]^d.
  std::function<std::unique_ptr<InteractionSum>(const InteractionKernel&, int d, Eigen::Index n)>
      make;
  // Whether it handles the kernel in d dimensions.
  std::function<bool(const InteractionKernel&, int d)> handles;
  double agreement;  // relative gradient and energy error against the reference sum
  // Gradient against the pair energy's derivative: coordinate by coordinate (relative to
  // 1 + |difference quotient|; not checked when absent) and along the whole gradient (relative).
  std::optional<double> coordinate;
  double direction;
  double two_particle;  // two particles against the kernel itself, relative to 1 + |value|
};

// gtest prints a parameter as its name (and ctest names the tests …/reference, …/direct, …/mesh).
void PrintTo(const SumUnderTest& sum, std::ostream* out) {
  *out << sum.name;
}

// Around the SIMD width, within one block, and over many blocks with a ragged last one.
const std::vector<Eigen::Index> kBlockSizes = {1, 2, 7, 9, 100, 531};

// The mesh convolves with the cell integrals of W, which exist for s < d only.
bool locally_integrable(const InteractionKernel& k, int d) {
  return k.kind != InteractionKernel::Kind::power || k.s < d;
}

SumUnderTest reference_sum() {
  return {.name = "reference",
          .dims = {1, 2, 3, 8},
          .sizes = kBlockSizes,
          .many = 531,  // rows are shared out at any size
          .make = [](const InteractionKernel& k, int,
                     Eigen::Index) { return make_reference_pair_sum(k); },
          .handles = [](const InteractionKernel&, int) { return true; },
          .agreement = 0.0,
          .coordinate = 1e-6,
          .direction = 1e-6,
          .two_particle = 1e-14};
}

SumUnderTest direct_sum() {
  return {.name = "direct",
          .dims = {1, 2, 3, 8},
          .sizes = kBlockSizes,
          .many = 2051,  // one thread below 1,500 particles
          .make = [](const InteractionKernel& k, int,
                     Eigen::Index) { return make_blocked_pair_sum(k); },
          .handles = [](const InteractionKernel&, int) { return true; },
          .agreement = 1e-12,
          .coordinate = 1e-6,
          .direction = 1e-6,
          .two_particle = 1e-14};
}

// The mesh on its default grid and near range, as runs use it. Its error against the exact sum
// is its discretisation error: measured on these sizes below 3·10⁻² for the gradient and
// 2·10⁻² for the energy, except the mollified kernel with ε = 0.05 below a cell, nearly singular
// on the mesh's scale (6·10⁻² in 2D); with a handful of particles a single pair just beyond the
// near range can make 0.15, hence no sizes between 2 and 100. Its convergence and the near
// range's gain are checked in particle_mesh_sum_test and particle_mesh_near_field_test. Its force
// on one particle interpolates centred differences of the potential, while its energy's
// derivative is a one-sided difference across the particle's cell: the two differ by O(h)
// particle by particle, so only the derivative along the whole gradient is checked (measured
// within 1.1·10⁻²).
SumUnderTest mesh_sum() {
  return {.name = "mesh",
          .dims = {1, 2, 3},
          .sizes = {1, 2, 100, 531, 2000},
          .many = 2051,
          .make =
              [](const InteractionKernel& k, int d, Eigen::Index n) {
                return make_particle_mesh_sum(k, Eigen::VectorXd::Constant(d, -1.0),
                                              Eigen::VectorXd::Constant(d, 1.0),
                                              default_mesh_cells(n, d), default_near_cells(d));
              },
          .handles = locally_integrable,
          .agreement = 0.1,
          .coordinate = std::nullopt,
          .direction = 3e-2,
          .two_particle = 1e-12};
}

class InteractionSumContract : public testing::TestWithParam<SumUnderTest> {
 protected:
  // n points uniform in [−0.9, 0.9]^d: inside the mesh's box with room for the moves below.
  static Eigen::MatrixXd points(Eigen::Index n, int d, std::uint64_t seed) {
    return test::random_points(n, d, seed, 0.9);
  }
  // The kernels of test::every_kernel the sum handles in d dimensions.
  static std::vector<InteractionKernel> kernels(const SumUnderTest& sum, int d) {
    std::vector<InteractionKernel> handled;
    for (const InteractionKernel& k : test::every_kernel(d))
      if (sum.handles(k, d)) handled.push_back(k);
    return handled;
  }
  static std::string label(const InteractionKernel& kernel, int d) {
    return kernel.describe() + " d=" + std::to_string(d);
  }
};

TEST_P(InteractionSumContract, AgreesWithTheReferenceSumForEveryKernel) {
  const SumUnderTest& sum = GetParam();
  for (int d : sum.dims) {
    for (const InteractionKernel& kernel : kernels(sum, d)) {
      auto reference = make_reference_pair_sum(kernel);
      auto tested = sum.make(kernel, d, sum.sizes.back());
      for (Eigen::Index n : sum.sizes) {
        const Eigen::MatrixXd x = points(n, d, 17 + n);
        const PairSumResult a = evaluate(*tested, x), b = evaluate(*reference, x);
        EXPECT_LE(test::relative_error(a.gradient, b.gradient), sum.agreement)
            << label(kernel, d) << " n=" << n;
        EXPECT_LE(test::relative_error(a.energy, b.energy), sum.agreement)
            << label(kernel, d) << " n=" << n;
        // Forces alone (no energy) may take another path, but give the same numbers.
        Eigen::MatrixXd forces_only(n, d);
        tested->compute(x, forces_only, nullptr);
        EXPECT_EQ(forces_only, a.gradient) << label(kernel, d) << " n=" << n;
      }
    }
  }
}

// Σ_{k≠l} W(x_k − x_l) has ∂/∂x_k = 2 Σ_l ∇W(x_k − x_l) (W is even), so the gradient rows are
// half the derivative of the pair energy.
TEST_P(InteractionSumContract, GradientIsHalfTheDerivativeOfThePairEnergyForEveryKernel) {
  const SumUnderTest& sum = GetParam();
  const Eigen::Index n = 61;
  for (int d : sum.dims) {
    for (const InteractionKernel& kernel : kernels(sum, d)) {
      auto tested = sum.make(kernel, d, n);
      const Eigen::MatrixXd x = points(n, d, 3 + d);
      auto energy = [&](const Eigen::MatrixXd& y) { return evaluate(*tested, y).energy; };
      const Eigen::MatrixXd gradient = evaluate(*tested, x).gradient;
      if (sum.coordinate)
        test::expect_coordinate_derivatives(energy, x, gradient, 0.5, *sum.coordinate,
                                            label(kernel, d));
      test::expect_derivative_along_gradient(energy, x, gradient, 0.5, sum.direction,
                                             label(kernel, d));
    }
  }
}

// A lone particle feels no force and has no pair energy: the self term k = l is left out.
TEST_P(InteractionSumContract, SelfTermIsExcludedForEveryKernel) {
  const SumUnderTest& sum = GetParam();
  for (int d : sum.dims) {
    const Eigen::MatrixXd x = points(1, d, 4);
    for (const InteractionKernel& kernel : kernels(sum, d)) {
      const PairSumResult r = evaluate(*sum.make(kernel, d, 1), x);
      EXPECT_LT(r.gradient.norm(), 1e-12) << label(kernel, d);
      EXPECT_LT(std::abs(r.energy), 1e-12) << label(kernel, d);
    }
  }
}

// Two particles: the energy is 2 W(z) (both ordered pairs) and the gradients are ±∇W(z). They
// are within the mesh's near range, where it sums pairs exactly.
TEST_P(InteractionSumContract, TwoParticlesGiveTheKernelItselfForEveryKernel) {
  const SumUnderTest& sum = GetParam();
  for (int d : sum.dims) {
    Eigen::MatrixXd x = Eigen::MatrixXd::Constant(2, d, -0.3);
    for (int a = 0; a < d; ++a) x(1, a) += (a % 2 ? -1 : 1) * 0.01 * (7 - a);  // |z| ≈ 0.1
    const Eigen::VectorXd z = (x.row(0) - x.row(1)).transpose();
    for (const InteractionKernel& kernel : kernels(sum, d)) {
      const PairSumResult r = evaluate(*sum.make(kernel, d, 2), x);
      visit(kernel, [&](auto w) {
        const double value = kernel_value(w, z);
        EXPECT_NEAR(r.energy, 2 * value, sum.two_particle * (1 + 2 * std::abs(value)))
            << label(kernel, d);
        const Eigen::VectorXd g = kernel_gradient(w, z);
        EXPECT_LE((r.gradient.row(0).transpose() - g).norm(), sum.two_particle * (1 + g.norm()))
            << label(kernel, d);
        EXPECT_LE((r.gradient.row(1).transpose() + g).norm(), sum.two_particle * (1 + g.norm()))
            << label(kernel, d);
      });
    }
  }
}

// Built and evaluated on one thread, then evaluated again on 2, 3 and 4 (so that no serial set-up
// runs beside idle OpenMP workers spinning on a shared machine).
TEST_P(InteractionSumContract, ResultsAreBitwiseIndependentOfTheThreadCount) {
  const SumUnderTest& sum = GetParam();
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  struct Case {
    std::string label;
    Eigen::MatrixXd x;
    std::unique_ptr<InteractionSum> sum;
    PairSumResult one;
  };
  std::vector<Case> cases;
  for (int d : sum.dims)
    for (const InteractionKernel& kernel :
         {InteractionKernel::power(0.5), InteractionKernel::log(), InteractionKernel::power(1.3)}) {
      if (!sum.handles(kernel, d)) continue;
      Case c{label(kernel, d), points(sum.many, d, 5), sum.make(kernel, d, sum.many), {}};
      c.one = evaluate(*c.sum, c.x);
      cases.push_back(std::move(c));
    }
  for (int t : {2, 3, 4}) {
    omp_set_num_threads(t);
    for (Case& c : cases) {
      const PairSumResult many = evaluate(*c.sum, c.x);
      EXPECT_EQ(many.gradient, c.one.gradient) << c.label << " threads=" << t;
      EXPECT_EQ(many.energy, c.one.energy) << c.label << " threads=" << t;
    }
  }
  omp_set_num_threads(threads);
}

INSTANTIATE_TEST_SUITE_P(, InteractionSumContract,
                         testing::Values(reference_sum(), direct_sum(), mesh_sum()));

}  // namespace
}  // namespace cpm
