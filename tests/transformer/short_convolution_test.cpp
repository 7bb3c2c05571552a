// The depthwise causal convolution of BaseConv: its values against Conv1d's definition written out
// with explicit left padding, its backward against finite differences in double (every input,
// weight and bias entry; k = 1 … 4; sequences shorter than the kernel; channel counts across the
// 16-channel blocks of the weight gradient), and results that do not depend on the thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/transformer/finite_difference.hpp"
#include "transformer/short_convolution.hpp"

namespace cpm {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

// Conv1d(C, C, k, groups=C, padding=k−1) on one sequence (C, L) stored column-major as the layer
// reads it: pad k−1 zeros on both sides, correlate, keep the first L outputs.
std::vector<double> conv1d_reference(const std::vector<double>& in, const std::vector<double>& w,
                                     const std::vector<double>& bias, int batch, int length, int c,
                                     int k) {
  std::vector<double> out(static_cast<std::size_t>(c) * batch * length);
  const int padded = length + 2 * (k - 1);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < c; ++i) {
      std::vector<double> x(padded, 0.0);
      for (int t = 0; t < length; ++t) x[t + k - 1] = in[(b * length + t) * c + i];
      for (int t = 0; t < length; ++t) {  // output t of the padded correlation
        double s = bias[i];
        for (int j = 0; j < k; ++j) s += w[i * k + j] * x[t + j];
        out[(b * length + t) * c + i] = s;
      }
    }
  return out;
}

struct Size {
  int batch, length, c, k;
};

std::string name(const Size& s) {
  char text[64];
  std::snprintf(text, sizeof text, "B%d L%d C%d k%d", s.batch, s.length, s.c, s.k);
  return text;
}

const Size kSizes[] = {{2, 5, 3, 1}, {2, 5, 3, 2}, {2, 6, 4, 3},  {3, 4, 5, 4}, {2, 2, 3, 3},
                       {2, 1, 2, 4}, {3, 3, 2, 4}, {2, 4, 17, 3}, {1, 7, 33, 2}};

TEST(ShortConvolution, ForwardMatchesConv1dWithLeftPadding) {
  for (const Size& s : kSizes) {
    const int n = s.batch * s.length;
    const auto x = random_vector(s.c * n, 1), w = random_vector(s.c * s.k, 2),
               b = random_vector(s.c, 3);
    std::vector<double> y(s.c * n);
    short_convolution_forward(y.data(), x.data(), w.data(), b.data(), s.batch, s.length, s.c, s.k);
    const auto expected = conv1d_reference(x, w, b, s.batch, s.length, s.c, s.k);
    for (int i = 0; i < s.c * n; ++i) EXPECT_NEAR(y[i], expected[i], 1e-14) << name(s) << " " << i;
  }
}

// Output t reads positions ≤ t of its own sequence only.
TEST(ShortConvolution, IsCausalAndKeepsSequencesApart) {
  const int B = 2, L = 6, C = 3, k = 3;
  auto x = random_vector(C * B * L, 4);
  const auto w = random_vector(C * k, 5), b = random_vector(C, 6);
  std::vector<double> before(C * B * L), after(C * B * L);
  short_convolution_forward(before.data(), x.data(), w.data(), b.data(), B, L, C, k);
  for (int i = 0; i < C; ++i) x[(0 * L + 4) * C + i] += 1.0;  // sequence 0, position 4
  short_convolution_forward(after.data(), x.data(), w.data(), b.data(), B, L, C, k);
  for (int n = 0; n < B * L; ++n)
    for (int i = 0; i < C; ++i) {
      const bool reached = n >= 4 && n < L;  // positions 4, 5 of sequence 0
      if (reached)
        EXPECT_NE(after[n * C + i], before[n * C + i]) << n;
      else
        EXPECT_EQ(after[n * C + i], before[n * C + i]) << n;
    }
}

TEST(ShortConvolution, BackwardMatchesFiniteDifferences) {
  for (const Size& s : kSizes) {
    const int n = s.batch * s.length;
    auto x = random_vector(s.c * n, 7), w = random_vector(s.c * s.k, 8), b = random_vector(s.c, 9);
    const auto g = random_vector(s.c * n, 10);
    std::vector<double> y(s.c * n);
    auto loss = [&] {
      short_convolution_forward(y.data(), x.data(), w.data(), b.data(), s.batch, s.length, s.c,
                                s.k);
      return weighted_sum(y.data(), g);
    };
    // The backward adds: start from a known offset to check it.
    std::vector<double> dx(s.c * n, 0.5), dw(s.c * s.k, 0.25), db(s.c, -1.0);
    short_convolution_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(),
                               s.batch, s.length, s.c, s.k);
    for (double& v : dx) v -= 0.5;
    for (double& v : dw) v -= 0.25;
    for (double& v : db) v += 1.0;
    expect_gradient(x, dx, loss, "dx " + name(s), 1e-8);
    expect_gradient(w, dw, loss, "dw " + name(s), 1e-8);
    expect_gradient(b, db, loss, "db " + name(s), 1e-8);
  }
}

// Large enough for threads: every entry is computed by one thread in a fixed order, so one and
// two threads give the same bits.
TEST(ShortConvolution, ResultsDoNotDependOnTheThreadCount) {
  const int B = 16, L = 256, C = 64, k = 4, N = B * L;
  ASSERT_TRUE(short_convolution_parallel(B, L, C, k));
  std::vector<float> x(C * N), w(C * k), b(C), g(C * N);
  const auto rx = random_vector(x.size(), 11), rw = random_vector(w.size(), 12),
             rb = random_vector(b.size(), 13), rg = random_vector(g.size(), 14);
  std::copy(rx.begin(), rx.end(), x.begin());
  std::copy(rw.begin(), rw.end(), w.begin());
  std::copy(rb.begin(), rb.end(), b.begin());
  std::copy(rg.begin(), rg.end(), g.begin());
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> y(C * N), dx(C * N, 0.0f), dw(C * k, 0.0f), db(C, 0.0f);
    short_convolution_forward(y.data(), x.data(), w.data(), b.data(), B, L, C, k);
    short_convolution_backward(dx.data(), dw.data(), db.data(), g.data(), x.data(), w.data(), B, L,
                               C, k);
    omp_set_num_threads(saved);
    y.insert(y.end(), dx.begin(), dx.end());
    y.insert(y.end(), dw.begin(), dw.end());
    y.insert(y.end(), db.begin(), db.end());
    return y;
  };
  EXPECT_EQ(run(1), run(2));
  EXPECT_EQ(run(1), run(3));
}

}  // namespace
}  // namespace cpm
