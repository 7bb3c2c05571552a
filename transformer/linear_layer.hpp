#pragma once
// Affine layer y = W x + b over every token (llm.c's matmul_forward / matmul_backward).
// Tokens are split into kTokenChunks fixed chunks processed in parallel, each by one
// single-threaded matrix product; the weight gradient is the sum of the chunks' partial products
// added in chunk order, so results do not depend on the number of threads.
#include <algorithm>

#include "transformer/matrix_product.hpp"
#include "transformer/tensor_map.hpp"
#include "transformer/token_chunks.hpp"

namespace cpm {

// Scratch the backward pass needs for the per-chunk weight and bias gradients (c · oc and oc per
// chunk), in elements of T.
inline std::size_t linear_backward_scratch(int c, int oc) {
  return static_cast<std::size_t>(kTokenChunks) * (c + 1) * oc;
}

// out (OC, N) = W (OC, C) · in (C, N) + b (OC) [+ residual (OC, N)]; bias and residual may be
// null. The product adds onto the bias and the residual. `scratch` holds linear_backward_scratch(c,
// oc) elements (W column-major, transformer/matrix_product.hpp). out's columns lie ld_out apart
// (0: OC, packed).
template <class T>
void linear_forward(T* out, const T* in, const T* weight, const T* bias, int tokens, int c, int oc,
                    T* scratch, const T* residual = nullptr, std::ptrdiff_t ld_out = 0) {
  const std::ptrdiff_t ldo = ld_out > 0 ? ld_out : oc;
  ConstMatrixMap<T> x(in, c, tokens);
  StridedMap<T> y(out, oc, tokens, Eigen::OuterStride<>(ldo));
  if (oc >= 4 * tokens && !residual) {
    // Many more outputs than tokens (a vocabulary head over a few scored positions): chunks of
    // output rows, so that each reads its slice of W once instead of every chunk all of W.
    // Each slice (oc_k, C) with a padded leading dimension, padded only for columns of a multiple
    // of 4 KB (from 1,024 float rows): then kTokenChunks slices fit the scratch with room to spare.
    std::ptrdiff_t slice = 0;
    for (int k = 0; k < kTokenChunks; ++k)
      slice = std::max(slice, padded_leading_dimension<T>(token_chunk(k, oc).second) * c);
#pragma omp parallel for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [row, rows] = token_chunk(k, oc);
      const std::ptrdiff_t ld = padded_leading_dimension<T>(rows);
      T* w_k = scratch + k * slice;
      copy_transposed(w_k, ld, weight + static_cast<std::ptrdiff_t>(row) * c, c, c, rows);
      multiply(out + row, ldo, w_k, ld, in, 1, c, rows, tokens, c, false,
               bias ? bias + row : nullptr);
    }
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [row, rows] = token_chunk(k, oc);
      copy_transposed(scratch + row, oc, weight + static_cast<std::ptrdiff_t>(row) * c, c, c, rows);
    }
#pragma omp for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [begin, count] = token_chunk(k, tokens);
      if (count == 0) continue;
      auto y_k = y.middleCols(begin, count);
      if (residual && bias)
        y_k = ConstMatrixMap<T>(residual, oc, tokens).middleCols(begin, count).colwise() +
              ConstVectorMap<T>(bias, oc);
      else if (residual)
        y_k = ConstMatrixMap<T>(residual, oc, tokens).middleCols(begin, count);
      multiply(y_k.data(), ldo, scratch, oc, x.col(begin).data(), 1, c, oc, count, c,
               residual != nullptr, residual ? nullptr : bias);
    }
  }
}

// Differentiates `y = W x + b`:  din = Wᵀ dout (overwritten, if non-null), dW += dout xᵀ,
// db += Σ_n dout, in one parallel region. `scratch` holds linear_backward_scratch(c, oc) elements.
// Each chunk of tokens writes its partial dW and db (token_sums), and the partials are added in
// chunk order. With many more outputs than tokens (a vocabulary head over a few scored positions)
// the chunks are output rows instead: each writes its rows of dW and db, one product and one sum
// over every token with no partials, and a partial din from its slice of W; those partials are
// added in chunk order. dout's columns lie ld_dout apart (0: OC, packed).
template <class T>
void linear_backward(T* din, T* dweight, T* dbias, const T* dout, const T* in, const T* weight,
                     int tokens, int c, int oc, T* scratch, std::ptrdiff_t ld_dout = 0) {
  const std::ptrdiff_t ldd = ld_dout > 0 ? ld_dout : oc;
  ConstMatrixMap<T> w_t(weight, c, oc);
  ConstMatrixMap<T> x(in, c, tokens);
  ConstStridedMap<T> dy(dout, oc, tokens, Eigen::OuterStride<>(ldd));
  if (oc >= 4 * tokens) {
    const std::size_t part = static_cast<std::size_t>(c) * tokens;  // ≤ c · oc / 4
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (int k = 0; k < kTokenChunks; ++k) {
        const auto [row, rows] = token_chunk(k, oc);
        if (din)  // (C, oc_k)(oc_k, N)
          multiply(MatrixMap<T>(scratch + k * part, c, tokens), w_t.middleCols(row, rows),
                   dy.middleRows(row, rows));
        multiply_transposed(MatrixMap<T>(dweight, c, oc).middleCols(row, rows), x,
                            dy.middleRows(row, rows), true);  // (C, N)(N, oc_k)
        if (dbias) token_sums(dbias + row, dout + row, ldd, rows, tokens, true);
      }
      if (din) sum_chunk_partials(din, scratch, part, false);
    }
    return;
  }
  const std::size_t block = static_cast<std::size_t>(c) * oc;
  T* bias_partials = scratch + kTokenChunks * block;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [begin, count] = token_chunk(k, tokens);
      MatrixMap<T> partial(scratch + k * block, c, oc);
      T* bias_partial = bias_partials + static_cast<std::ptrdiff_t>(k) * oc;
      if (count == 0) {
        partial.setZero();
        std::fill_n(bias_partial, oc, T(0));
        continue;
      }
      if (din)  // (C, OC)(OC, n_k)
        multiply(MatrixMap<T>(din, c, tokens).middleCols(begin, count), w_t,
                 dy.middleCols(begin, count));
      multiply_transposed(partial, x.middleCols(begin, count),
                          dy.middleCols(begin, count));  // (C, n_k)(n_k, OC)
      if (dbias) token_sums(bias_partial, dy.col(begin).data(), ldd, oc, count, false);
    }
    sum_chunk_partials(dweight, scratch, block, true);
    if (dbias) sum_chunk_partials(dbias, bias_partials, oc, true);
  }
}

}  // namespace cpm
