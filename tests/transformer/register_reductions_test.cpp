// The register reductions of transformer/register_reductions.hpp and subtract_and_maximum
// (transformer/shifted_exponential.hpp) against element-by-element definitions, over lengths
// below, at and above a register's width; and the same bits wherever the data lie in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/transformer/random_values.hpp"
#include "transformer/register_reductions.hpp"
#include "transformer/shifted_exponential.hpp"

namespace cpm {
namespace {

const int kLengths[] = {1, 3, 8, 15, 16, 17, 33, 64, 100};

using testing::random_values;

template <class T>
void expect_sums_and_dots(int n) {
  const auto x = random_values<T>(n, 10 + n), y = random_values<T>(n, 20 + n);
  long double sum = 0, dot = 0, absolute = 0;
  for (int i = 0; i < n; ++i) {
    sum += x[i];
    dot += static_cast<long double>(x[i]) * y[i];
    absolute += std::abs(static_cast<long double>(x[i]) * y[i]) + std::abs(x[i]);
  }
  const double tolerance = 4.0 * n * std::numeric_limits<T>::epsilon() * double(absolute);
  EXPECT_NEAR(contiguous_sum(x.data(), n), double(sum), tolerance) << "n = " << n;
  EXPECT_NEAR(contiguous_dot(x.data(), y.data(), n), double(dot), tolerance) << "n = " << n;
  // The same values one element further on in memory: the same bits.
  std::vector<T> xs(n + 1), ys(n + 1);
  std::copy(x.begin(), x.end(), xs.begin() + 1);
  std::copy(y.begin(), y.end(), ys.begin() + 1);
  EXPECT_EQ(contiguous_sum(xs.data() + 1, n), contiguous_sum(x.data(), n)) << "n = " << n;
  EXPECT_EQ(contiguous_dot(xs.data() + 1, ys.data() + 1, n), contiguous_dot(x.data(), y.data(), n))
      << "n = " << n;
}

TEST(RegisterReductions, SumsAndDotsMatchTheDefinitionAndIgnoreTheAddress) {
  for (int n : kLengths) {
    expect_sums_and_dots<float>(n);
    expect_sums_and_dots<double>(n);
  }
}

TEST(RegisterReductions, FloatDotInDoubleIsExactForExactProducts) {
  // Floats with 12 significant bits times doubles with 12: every product and partial sum is
  // exact in double, so the result is the exact dot product, not only close to it.
  for (int n : kLengths) {
    std::vector<float> x(n);
    std::vector<double> y(n);
    double exact = 0.0;
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 37 % 4096) - 2048) / 1024.0f;
      y[i] = static_cast<double>((i * 53 % 4096) - 2048) / 512.0;
      exact += double(x[i]) * y[i];
    }
    EXPECT_EQ(contiguous_dot_in_double(x.data(), y.data(), n), exact) << "n = " << n;
    // Not rounded to float on the way: a term 2^-30 beside terms near 1 (below a float's
    // resolution, exact in double with the other terms' 2^-19 steps) counts.
    x[0] = 1.0f;
    y[0] = std::ldexp(1.0, -30);
    if (n > 1) {
      x[n - 1] = 1.0f;
      y[n - 1] = 1.0;
    }
    double with_small = 0.0;
    for (int i = 0; i < n; ++i) with_small += double(x[i]) * y[i];
    EXPECT_EQ(contiguous_dot_in_double(x.data(), y.data(), n), with_small) << "n = " << n;
    if (n > 1) {  // a value no float holds, which a float accumulation could not have given
      EXPECT_NE(double(static_cast<float>(with_small)), with_small) << "n = " << n;
    }
  }
}

template <class T>
void expect_subtract_and_maximum(int n) {
  const auto z = random_values<T>(n, 30 + n);
  for (int at : {0, n / 2, n - 1}) {  // the largest value first, in the middle, last
    std::vector<T> row = z;
    row[at] = static_cast<T>(7.5);
    const T value = static_cast<T>(0.375);
    std::vector<T> expected = row;
    for (auto& v : expected) v -= value;
    const T best = subtract_and_maximum(row.data(), n, value);
    EXPECT_EQ(best, *std::max_element(expected.begin(), expected.end()))
        << "n = " << n << ", largest at " << at;
    EXPECT_EQ(row, expected) << "n = " << n;
  }
}

TEST(RegisterReductions, SubtractAndMaximumMatchesTheDefinition) {
  for (int n : kLengths) {
    expect_subtract_and_maximum<float>(n);
    expect_subtract_and_maximum<double>(n);
  }
}

}  // namespace
}  // namespace cpm
