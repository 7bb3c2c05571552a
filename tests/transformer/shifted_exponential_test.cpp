// The vectorised row maximum and shifted exponentials of transformer/shifted_exponential.hpp
// against element-by-element definitions, over lengths below, at and above a register's width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "transformer/shifted_exponential.hpp"

namespace cpm {
namespace {

template <class T>
void expect_maximum_exact(int n) {
  std::mt19937 engine(static_cast<unsigned>(n));
  std::uniform_real_distribution<double> uniform(-5.0, 5.0);
  std::vector<T> z(n);
  for (auto& x : z) x = static_cast<T>(uniform(engine));
  for (int at : {0, n / 2, n - 1}) {  // the largest value first, in the middle, last
    std::vector<T> row = z;
    row[at] = static_cast<T>(7.5);
    EXPECT_EQ(maximum_value(row.data(), n), *std::max_element(row.begin(), row.end()))
        << "n = " << n << ", largest at " << at;
  }
}

TEST(ShiftedExponential, MaximumEqualsTheLargestElementWhereverItLies) {
  for (int n : {1, 3, 8, 15, 16, 17, 31, 64, 100, 8192}) {
    expect_maximum_exact<float>(n);
    expect_maximum_exact<double>(n);
  }
}

TEST(ShiftedExponential, ValuesAndSumMatchTheDefinition) {
  for (int n : {1, 7, 16, 33}) {
    std::vector<float> z(n), out(n);
    for (int j = 0; j < n; ++j) z[j] = 0.25f * static_cast<float>(j % 9) - 1.0f;
    const float shift = maximum_value(z.data(), n);
    const double total = shifted_exponential(out.data(), z.data(), n, shift);
    double expected_total = 0.0;
    for (int j = 0; j < n; ++j) {
      const double expected = std::exp(double(z[j]) - double(shift));
      EXPECT_NEAR(out[j], expected, 4e-7 * expected) << "n = " << n << ", j = " << j;
      expected_total += out[j];
    }
    EXPECT_NEAR(total, expected_total, 1e-12 * expected_total) << "n = " << n;
  }
}

}  // namespace
}  // namespace cpm
