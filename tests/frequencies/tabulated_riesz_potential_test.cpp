#include "frequencies/tabulated_riesz_potential.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "frequencies/riesz_potential_of_gaussian.hpp"

namespace cpm {
namespace {

// The interpolated U and gradient factor agree with the closed forms to 1e-9 (relative to the
// largest value) between the nodes, on the grid and beyond it (|ω| > 1e8 σ), for every kind of
// kernel.
TEST(TabulatedRieszPotential, InterpolatesTheClosedFormsEverywhere) {
  const std::pair<InteractionKernel, int> cases[] = {{InteractionKernel::linear(), 2},
                                                     {InteractionKernel::log(), 3},
                                                     {InteractionKernel::power(0.5), 16},
                                                     {InteractionKernel::power(1.0), 3}};
  for (const auto& [kernel, d] : cases) {
    const double sigma = 0.7;
    const auto exact = std::make_shared<const RieszPotentialOfGaussian>(kernel, d, sigma);
    const TabulatedRieszPotential table(exact);
    const double value_scale = std::abs(exact->value_r2(0.0)) + 1.0;
    const double factor_scale = std::abs(exact->gradient_factor(0.0));
    double worst_value = 0.0, worst_factor = 0.0;
    for (int i = 0; i <= 8000; ++i) {
      // r from 0 to 18σ, then from 18σ to 1e9σ geometrically, at points off the nodes.
      const double r = i <= 4000 ? 18.0 * sigma * (i + 0.37) / 4000.0
                                 : 18.0 * sigma * std::pow(1e9 / 18.0, (i - 4000.37) / 4000.0);
      const double r2 = r * r;
      // The log kernel's U grows like −log r: relative to its size there.
      const double scale = value_scale + std::abs(exact->value_r2(r2));
      worst_value =
          std::max(worst_value, std::abs(table.value_r2(r2) - exact->value_r2(r2)) / scale);
      worst_factor =
          std::max(worst_factor, std::abs(table.gradient_factor(r2) - exact->gradient_factor(r2)));
    }
    EXPECT_LT(worst_value, 1e-9) << kernel.describe() << " d=" << d;
    EXPECT_LT(worst_factor / factor_scale, 1e-9) << kernel.describe() << " d=" << d;
  }
}

TEST(TabulatedRieszPotential, SharedTablesAreBuiltOncePerLawKernelDimensionAndScale) {
  const auto a = shared_riesz_table(InteractionKernel::power(0.5), 2, 1.0);
  EXPECT_EQ(a, shared_riesz_table(InteractionKernel::power(0.5), 2, 1.0));
  EXPECT_NE(a, shared_riesz_table(InteractionKernel::power(0.5), 3, 1.0));
  EXPECT_NE(a, shared_riesz_table(InteractionKernel::power(0.5), 2, 2.0));
  EXPECT_NE(a, shared_riesz_table(InteractionKernel::power(0.5), 2, 1.0, SpectralLaw::laplace));
  EXPECT_THROW(shared_riesz_table(InteractionKernel::linear(), 2, 1.0, SpectralLaw::laplace),
               std::invalid_argument);
}

}  // namespace
}  // namespace cpm
