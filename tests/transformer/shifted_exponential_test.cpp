// The vectorised row maximum and shifted exponentials of transformer/shifted_exponential.hpp
// against element-by-element definitions, over lengths below, at and above a register's width,
// its exponential_lanes against xsimd::exp and the double-precision exp, and exponential2_lanes
// against the double-precision exp2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

// A float exponential's lanes at −∞ and at first, first − 4, …: each at least 0 and below the
// smallest normal float, and 0 below zero_below.
template <class Lanes>
void expect_underflow(const Lanes& lanes, double first, double zero_below) {
  using T = float;
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  alignas(64) T low[width], out[width];
  for (int l = 0; l < width; ++l) low[l] = static_cast<T>(first - 4.0 * l);
  low[0] = -std::numeric_limits<T>::infinity();
  lanes(Batch::load_aligned(low)).store_aligned(out);
  for (int l = 0; l < width; ++l) {
    EXPECT_GE(out[l], T(0)) << "x = " << low[l];
    EXPECT_LT(out[l], std::numeric_limits<T>::min()) << "x = " << low[l];
    if (low[l] < static_cast<T>(zero_below)) {
      EXPECT_EQ(out[l], T(0)) << "x = " << low[l];
    }
  }
}

// Every float exponent from −87 to 88 in steps of 2^-9 (e^x is normal from −87.3 on):
// exponential_lanes gives xsimd::exp's bits where e^x is a normal float, within 1.5 ulp of the true
// value; below, 0 at −∞ and under −104, a subnormal or zero between.
TEST(ShiftedExponential, ExponentialLanesAreXsimdsExpWhereNormal) {
  using T = float;
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  std::vector<T> x;
  for (double v = -87.0; v <= 88.0; v += 1.0 / 512) x.push_back(static_cast<T>(v));
  while (x.size() % width != 0) x.push_back(T(0));
  std::vector<T> ours(x.size()), theirs(x.size());
  for (std::size_t i = 0; i < x.size(); i += width) {
    exponential_lanes(Batch::load_unaligned(&x[i])).store_unaligned(&ours[i]);
    xsimd::exp(Batch::load_unaligned(&x[i])).store_unaligned(&theirs[i]);
  }
  int differing = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    differing += ours[i] != theirs[i];
    const double exact = std::exp(double(x[i]));
    ASSERT_NEAR(ours[i], exact, 1.5 * exact * std::numeric_limits<T>::epsilon()) << "x = " << x[i];
  }
  EXPECT_EQ(differing, 0);
  expect_underflow([](const Batch& x) { return exponential_lanes(x); }, -88.0, -104.0);
}

// Every float exponent from −126 to 127 (not included) in steps of 2^-9: exponential2_lanes
// within 1.5 ulp of the true value; below, 0 at −∞ and under −152, a subnormal or zero between.
TEST(ShiftedExponential, PowerOfTwoLanesAreWithinAnUlpAndZeroFarBelow) {
  using T = float;
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  std::vector<T> x;
  for (double v = -126.0; v < 127.0; v += 1.0 / 512) x.push_back(static_cast<T>(v));
  while (x.size() % width != 0) x.push_back(T(0));
  std::vector<T> ours(x.size());
  for (std::size_t i = 0; i < x.size(); i += width)
    exponential2_lanes(Batch::load_unaligned(&x[i])).store_unaligned(&ours[i]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp2(double(x[i]));
    ASSERT_NEAR(ours[i], exact, 1.5 * exact * std::numeric_limits<T>::epsilon()) << "x = " << x[i];
  }
  expect_underflow([](const Batch& x) { return exponential2_lanes(x); }, -127.0, -152.0);
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
