#pragma once
// Views of the flat parameter and activation buffers as Eigen matrices. Every activation is a
// column-major (channels, tokens) matrix: one column per token, tokens ordered (batch, position).
// A weight of a linear map R^C → R^OC is stored row-major (OC, C), the PyTorch layout, which is
// the column-major (C, OC) matrix Wᵀ.
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cstddef>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "transformer/register_reductions.hpp"

namespace cpm {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;
// A row-major tile, e.g. attention scores with one contiguous row per query.
template <class T>
using RowMatrixMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using VectorMap = Eigen::Map<Vector<T>>;
template <class T>
using ConstVectorMap = Eigen::Map<const Vector<T>>;
// A column block of a wider matrix, e.g. the rows of one head inside the (3C, N) q|k|v buffer.
template <class T>
using StridedMap = Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>>;
template <class T>
using ConstStridedMap = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;

// Σ_i x_i and Σ_i x_i y_i over contiguous vectors (column blocks and segments of column-major
// maps) in an order that depends on the length alone: contiguous_sum and contiguous_dot
// (transformer/register_reductions.hpp). Eigen's vectorised reductions start at the first aligned
// element, so their order of summation, and so their last bit, would depend on where a buffer
// happens to lie in memory (and with it on the allocation pattern, e.g. of per-thread scratch).
template <class V>
typename V::Scalar ordered_sum(const V& x) {
  eigen_assert(x.innerStride() == 1);
  return contiguous_sum(x.data(), x.size());
}
template <class V, class W>
typename V::Scalar ordered_dot(const V& x, const W& y) {
  eigen_assert(x.innerStride() == 1 && y.innerStride() == 1 && x.size() == y.size());
  return contiguous_dot(x.data(), y.data(), x.size());
}

namespace token_sums_detail {

constexpr int kBlock = 16, kPartials = 4;

// The sums of one block of `width` ≤ kBlock channels at x over the tokens, as described at
// token_sums: partial[n mod 4] += x(i, n) in double, then (s₀ + s₁) + (s₂ + s₃).
template <class T>
void block_sums(double* sums, const T* x, std::ptrdiff_t ld, int width, int tokens) {
  double partial[kPartials][kBlock] = {};
  const auto add = [&](double* p, int n) {
    const T* col = x + static_cast<std::ptrdiff_t>(n) * ld;
    if (width == kBlock)  // a fixed trip count the compiler keeps in registers
      for (int i = 0; i < kBlock; ++i) p[i] += col[i];
    else
      for (int i = 0; i < width; ++i) p[i] += col[i];
  };
  int n = 0;
  for (; n + kPartials <= tokens; n += kPartials)
    for (int p = 0; p < kPartials; ++p) add(partial[p], n + p);
  for (; n < tokens; ++n) add(partial[n % kPartials], n);
  for (int i = 0; i < width; ++i)
    sums[i] = (partial[0][i] + partial[1][i]) + (partial[2][i] + partial[3][i]);
}

#ifdef __AVX512F__
// A full block of float channels in registers: each token's 16 values widened to two registers of
// doubles, the same additions in the same order as the loop above (which GCC leaves half scalar,
// through the stack).
inline void block_sums(double* sums, const float* x, std::ptrdiff_t ld, int width, int tokens) {
  if (width != kBlock) return block_sums<float>(sums, x, ld, width, tokens);
  __m512d low[kPartials], high[kPartials];
#pragma GCC unroll 4
  for (int p = 0; p < kPartials; ++p) low[p] = high[p] = _mm512_setzero_pd();
  const auto add = [&](int p, int n) {
    const float* col = x + static_cast<std::ptrdiff_t>(n) * ld;
    low[p] = _mm512_add_pd(low[p], _mm512_cvtps_pd(_mm256_loadu_ps(col)));
    high[p] = _mm512_add_pd(high[p], _mm512_cvtps_pd(_mm256_loadu_ps(col + 8)));
  };
  int n = 0;
  for (; n + kPartials <= tokens; n += kPartials)
#pragma GCC unroll 4
    for (int p = 0; p < kPartials; ++p) add(p, n + p);
  for (; n < tokens; ++n) add(n % kPartials, n);
  _mm512_storeu_pd(sums,
                   _mm512_add_pd(_mm512_add_pd(low[0], low[1]), _mm512_add_pd(low[2], low[3])));
  _mm512_storeu_pd(sums + 8,
                   _mm512_add_pd(_mm512_add_pd(high[0], high[1]), _mm512_add_pd(high[2], high[3])));
}
#endif

}  // namespace token_sums_detail

// out[i] (+)= Σ_n x(i, n) over the columns of a (c, tokens) block with leading dimension ld,
// accumulated in double (onto out's values with `accumulate`): blocks of 16 channels, tokens inner,
// so memory is read in order. Each sum runs over the tokens in four interleaved partial sums
// (token n into partial n mod 4, combined as (s₀ + s₁) + (s₂ + s₃)): one chain of dependent
// additions would wait the adder's latency at every token. Single-threaded; the order depends on
// the token count alone.
template <class T>
void token_sums(T* out, const T* x, std::ptrdiff_t ld, int c, int tokens, bool accumulate) {
  using namespace token_sums_detail;
  for (int i0 = 0; i0 < c; i0 += kBlock) {
    const int width = std::min(kBlock, c - i0);
    double sums[kBlock];
    block_sums(sums, x + i0, ld, width, tokens);
    for (int i = 0; i < width; ++i)
      out[i0 + i] = accumulate ? out[i0 + i] + static_cast<T>(sums[i]) : static_cast<T>(sums[i]);
  }
}

}  // namespace cpm
