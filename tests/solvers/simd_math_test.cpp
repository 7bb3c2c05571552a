#include "solvers/simd_math.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace cpm {
namespace {

// Largest relative error of scale · x^p against long double powl over n values of x,
// log-uniform in [lo, hi].
double worst_power_error(double p, double scale, double lo, double hi, int n) {
  const SimdPower power(p, scale);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log_x(std::log(lo), std::log(hi));
  alignas(64) double x[SimdDouble::size], y[SimdDouble::size];
  double worst = 0.0;
  for (int done = 0; done < n; done += static_cast<int>(SimdDouble::size)) {
    for (double& v : x) v = std::exp(log_x(rng));
    power(SimdDouble::load_aligned(x)).store_aligned(y);
    for (std::size_t k = 0; k < SimdDouble::size; ++k) {
      const long double exact = scale * std::pow(static_cast<long double>(x[k]), p);
      worst = std::max(worst, static_cast<double>(std::fabs((y[k] - exact) / exact)));
    }
  }
  return worst;
}

// The AVX-512 tables and polynomials, and the AVX2 polynomials; elsewhere xsimd's exp(p log x),
// about 10 times coarser.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
constexpr double kPowerTolerance = 1e-15;
#else
constexpr double kPowerTolerance = 1e-14;
#endif

TEST(SimdPower, MatchesLongDoublePowToFewUnitsInTheLastPlace) {
  // Measured: at most 6·10⁻¹⁶ for each exponent with AVX-512, 4.3·10⁻¹⁶ with AVX2 (xsimd's exp
  // and log: 7·10⁻¹⁵).
  std::printf("SimdPower on %s\n", simd_instruction_set());
  for (double s : {0.3, 1.3, 2.0, 2.7, 4.0}) {
    const double p = -0.5 * s - 1.0;
    EXPECT_LE(worst_power_error(p, s, 1e-8, 1e8, 1000000), kPowerTolerance) << "p = " << p;
  }
}

// Worst relative error of 1.3 x^−1.65 over a few values of x either side of each centre.
double worst_error_near(const std::vector<double>& centres) {
  const SimdPower power(-1.65, 1.3);
  double worst = 0.0;
  for (double centre : centres) {
    alignas(64) double x[SimdDouble::size], y[SimdDouble::size];
    for (std::size_t k = 0; k < SimdDouble::size; ++k)
      x[k] = centre * (1.0 + (static_cast<double>(k) - 4.0) * 0x1p-52);
    power(SimdDouble::load_aligned(x)).store_aligned(y);
    for (std::size_t k = 0; k < SimdDouble::size; ++k) {
      const long double exact =
          1.3L * std::pow(static_cast<long double>(x[k]), static_cast<long double>(-1.65));
      worst = std::max(worst, static_cast<double>(std::fabs((y[k] - exact) / exact)));
    }
  }
  return worst;
}

// Binade edges and the AVX-512 table boundaries (1 + i/16), and the AVX2 reduction's boundary
// √2 (where m jumps from √2 to √½).
TEST(SimdPower, HoldsOnBinadeEdgesTableBoundariesAndTheReductionBoundary) {
  std::vector<double> centres;
  for (int e = -30; e <= 30; ++e) {
    for (int i = 0; i <= 16; ++i) centres.push_back(std::ldexp(1.0 + i / 16.0, e));
    centres.push_back(std::ldexp(std::sqrt(2.0), e));
  }
  EXPECT_LE(worst_error_near(centres), kPowerTolerance);
}

// Results beyond 2^±1000 leave the AVX2 fast path (its exponent arithmetic would wrap); those
// lanes become infinity or zero as for std::pow, and their neighbours keep their accuracy.
TEST(SimdPower, OverflowsToInfinityAndUnderflowsToZeroLaneByLane) {
  const SimdPower power(-1.65, 1.3);
  alignas(64) double x[SimdDouble::size], y[SimdDouble::size];
  for (std::size_t k = 0; k < SimdDouble::size; ++k) x[k] = 0.5 + static_cast<double>(k);
  x[0] = 1e-300;  // 1.3 · 10^495
  x[1] = 1e300;   // 1.3 · 10^−495
  power(SimdDouble::load_aligned(x)).store_aligned(y);
  EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0.0) << y[0];
  EXPECT_EQ(y[1], 0.0);
  for (std::size_t k = 2; k < SimdDouble::size; ++k) {
    const double exact = 1.3 * std::pow(x[k], -1.65);
    EXPECT_NEAR(y[k], exact, kPowerTolerance * exact) << "x = " << x[k];
  }
}

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
// The AVX2 path's lanes outside its range also cover what is not a positive normal double.
TEST(SimdPower, Avx2PathGivesInfinityAtZeroAndPropagatesNaN) {
  const SimdPower power(-1.65, 1.3);
  alignas(32) double x[4] = {0.0, std::nan(""), 0x1p-1070, 2.0}, y[4];
  power(SimdDouble::load_aligned(x)).store_aligned(y);
  EXPECT_TRUE(std::isinf(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_TRUE(std::isinf(y[2]));  // a subnormal x: 1.3 · 2^1765.5
  EXPECT_NEAR(y[3], 1.3 * std::pow(2.0, -1.65), 1e-15);
}

// Larger exponents than the pair loops use (s = 10) stay within a few units in the last place.
TEST(SimdPower, Avx2PathHoldsForLargerExponents) {
  EXPECT_LE(worst_power_error(-6.0, 10.0, 1e-8, 1e8, 200000), 1e-15);
  EXPECT_LE(worst_power_error(0.5, 1.0, 1e-300, 1e300, 200000), 1e-15);
}
#endif

}  // namespace
}  // namespace cpm
