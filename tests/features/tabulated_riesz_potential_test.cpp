#include "features/tabulated_riesz_potential.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace cpm {
namespace {

// The interpolated U and gradient factor agree with the closed forms to 1e-9 (relative to the
// largest value) between the nodes, on the grid and beyond it, for every kind of kernel.
TEST(TabulatedRieszPotential, InterpolatesTheClosedFormsEverywhere) {
  const std::pair<InteractionKernel, int> cases[] = {{InteractionKernel::linear(), 2},
                                                     {InteractionKernel::log(), 3},
                                                     {InteractionKernel::power(0.5), 16},
                                                     {InteractionKernel::power(1.0), 3}};
  for (const auto& [kernel, d] : cases) {
    const double sigma = 0.7;
    const TabulatedRieszPotential table(RieszPotentialOfGaussian(kernel, d, sigma));
    const RieszPotentialOfGaussian& exact = table.exact();
    const double value_scale = std::abs(exact.value_r2(0.0)) + 1.0;
    const double factor_scale = std::abs(exact.gradient_factor(0.0));
    double worst_value = 0.0, worst_factor = 0.0;
    for (int i = 0; i <= 4000; ++i) {
      // r from 0 to 18σ, past the grid's end at 16σ, at points off the nodes.
      const double r = 18.0 * sigma * (i + 0.37) / 4000.0;
      const double r2 = r * r;
      worst_value = std::max(worst_value, std::abs(table.value_r2(r2) - exact.value_r2(r2)));
      worst_factor =
          std::max(worst_factor, std::abs(table.gradient_factor(r2) - exact.gradient_factor(r2)));
    }
    EXPECT_LT(worst_value / value_scale, 1e-9) << kernel.describe() << " d=" << d;
    EXPECT_LT(worst_factor / factor_scale, 1e-9) << kernel.describe() << " d=" << d;
  }
}

TEST(TabulatedRieszPotential, SharedTablesAreBuiltOncePerKernelDimensionAndScale) {
  const auto a = shared_riesz_table(InteractionKernel::linear(), 2, 1.0);
  EXPECT_EQ(a, shared_riesz_table(InteractionKernel::linear(), 2, 1.0));
  EXPECT_NE(a, shared_riesz_table(InteractionKernel::linear(), 3, 1.0));
  EXPECT_NE(a, shared_riesz_table(InteractionKernel::linear(), 2, 2.0));
}

}  // namespace
}  // namespace cpm
