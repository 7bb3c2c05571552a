// Every InteractionKernel::Kind reaches each of the three places that turn a kind into code:
// visit() (the scalar evaluator), visit_simd() (its SIMD twin, solvers/simd_pair_evaluators.hpp)
// and radial_moment() (solvers/cell_integrated_kernel.hpp, through the evaluator's member). The
// kinds are enumerated by number up to InteractionKernel::kind_count, so a kind added to the enum
// without an example here fails the first test, one that visit() does not handle throws in every
// test, and an evaluator without a SIMD twin or a radial moment does not compile.
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "core/quadrature.hpp"
#include "physics/riesz_kernel.hpp"
#include "solvers/cell_integrated_kernel.hpp"
#include "solvers/simd_pair_evaluators.hpp"

namespace cpm {
namespace {

using Kind = InteractionKernel::Kind;

// An example of each kind; for a kind without one, a test failure and `none`.
InteractionKernel example_of(Kind kind) {
  switch (kind) {
    case Kind::power:
      return InteractionKernel::power(0.7);
    case Kind::log:
      return InteractionKernel::log();
    case Kind::linear:
      return InteractionKernel::linear();
    case Kind::mollified:
      return InteractionKernel::mollified(0.5, 0.1);
    case Kind::quadratic:
      return InteractionKernel::quadratic(0.7);
    case Kind::absolute:
      return InteractionKernel::absolute(1.3);
    case Kind::none:
      return InteractionKernel::none();
  }
  ADD_FAILURE() << "no example of kind " << static_cast<int>(kind);
  return InteractionKernel::none();
}

std::vector<InteractionKernel> one_of_each_kind() {
  std::vector<InteractionKernel> kernels;
  for (int k = 0; k < InteractionKernel::kind_count; ++k)
    kernels.push_back(example_of(static_cast<Kind>(k)));
  return kernels;
}

TEST(KernelKinds, EveryKindHasAnExampleOfThatKind) {
  for (int k = 0; k < InteractionKernel::kind_count; ++k)
    EXPECT_EQ(static_cast<int>(example_of(static_cast<Kind>(k)).kind), k);
}

// The scalar evaluator of each kind, by type.
template <class Expected>
bool visits(const InteractionKernel& kernel) {
  return visit(kernel,
               [](const auto& w) { return std::is_same_v<std::decay_t<decltype(w)>, Expected>; });
}

TEST(KernelKinds, VisitHandsEachKindItsEvaluator) {
  EXPECT_TRUE(visits<RieszPower>(example_of(Kind::power)));
  EXPECT_TRUE(visits<RieszLog>(example_of(Kind::log)));
  EXPECT_TRUE(visits<RieszLinear>(example_of(Kind::linear)));
  EXPECT_TRUE(visits<RieszMollified>(example_of(Kind::mollified)));
  EXPECT_TRUE(visits<QuadraticPair>(example_of(Kind::quadratic)));
  EXPECT_TRUE(visits<AbsolutePair>(example_of(Kind::absolute)));
  EXPECT_TRUE(visits<QuadraticPair>(example_of(Kind::none)));
  EXPECT_EQ(visit(InteractionKernel::none(), [](const auto& w) { return w.value_r2(2.0); }), 0.0);
  for (const InteractionKernel& kernel : one_of_each_kind())
    EXPECT_NO_THROW(visit(kernel, [](const auto&) {})) << kernel.describe();
}

// The SIMD twin evaluates the same W: h = −g and f at a register of r² values, against the
// scalar evaluator, for each kind and for every special case of the twin's choice (powers 1/2
// and 1, the mollified log and powers).
TEST(KernelKinds, VisitSimdHandsEachKindTheTwinOfItsEvaluator) {
  std::vector<InteractionKernel> kernels = one_of_each_kind();
  for (const InteractionKernel& k :
       {InteractionKernel::power(0.5), InteractionKernel::power(1.0),
        InteractionKernel::mollified(0.0, 0.1), InteractionKernel::mollified(1.0, 0.2),
        InteractionKernel::mollified(1.7, 0.05)})
    kernels.push_back(k);
  alignas(64) double r2[SimdDouble::size], h[SimdDouble::size], f[SimdDouble::size];
  for (std::size_t i = 0; i < SimdDouble::size; ++i) r2[i] = 0.01 + 0.37 * i * i;
  for (const InteractionKernel& kernel : kernels) {
    visit_simd(kernel, [&](const auto& simd) {
      const SimdPairTerms terms = simd.template evaluate<true>(SimdDouble::load_aligned(r2));
      terms.minus_factor.store_aligned(h);
      terms.value.store_aligned(f);
    });
    visit(kernel, [&](const auto& w) {
      for (std::size_t i = 0; i < SimdDouble::size; ++i) {
        const double g = w.gradient_factor(r2[i]), value = w.value_r2(r2[i]);
        EXPECT_NEAR(h[i], -g, 1e-14 * std::abs(g)) << kernel.describe() << " r2=" << r2[i];
        EXPECT_NEAR(f[i], value, 1e-14 * std::abs(value)) << kernel.describe() << " r2=" << r2[i];
      }
    });
  }
}

// G_d(ρ) = ∫_0^ρ f(r) r^{d−1} dr against adaptive quadrature of the scalar evaluator's value, in
// each dimension where W is locally integrable.
TEST(KernelKinds, RadialMomentOfEachKindIsTheIntegralOfItsProfile) {
  for (const InteractionKernel& kernel : one_of_each_kind()) {
    for (int d = 1; d <= 3; ++d) {
      if (kernel.kind == Kind::power && kernel.s >= d) continue;
      for (double rho : {0.05, 0.4, 1.7}) {
        const double expected = visit(kernel, [&](const auto& w) {
          return integrate_adaptive(
              [&](double r) { return w.value_r2(r * r) * std::pow(r, d - 1); }, 0.0, rho);
        });
        EXPECT_NEAR(radial_moment(kernel, d, rho), expected, 1e-11 * (1 + std::abs(expected)))
            << kernel.describe() << " d=" << d << " rho=" << rho;
      }
    }
  }
  EXPECT_THROW(radial_moment(InteractionKernel::power(1.0), 1, 0.5), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
