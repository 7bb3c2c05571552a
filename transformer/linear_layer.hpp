#pragma once
// Affine layer y = W x + b over every token (llm.c's matmul_forward / matmul_backward).
// Tokens are split into kTokenChunks fixed chunks processed in parallel, each by one
// single-threaded matrix product; the weight gradient is the sum of the chunks' partial products
// added in chunk order, so results do not depend on the number of threads.
#include <algorithm>

#include "transformer/matrix_product.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {

inline constexpr int kTokenChunks = 8;

// Scratch the backward pass needs for the per-chunk weight gradients, in elements of T.
inline std::size_t linear_backward_scratch(int c, int oc) {
  return static_cast<std::size_t>(kTokenChunks) * c * oc;
}

inline std::pair<int, int> token_chunk(int k, int tokens) {
  const int begin = static_cast<int>(static_cast<long>(tokens) * k / kTokenChunks);
  const int end = static_cast<int>(static_cast<long>(tokens) * (k + 1) / kTokenChunks);
  return {begin, end - begin};
}

// out (OC, N) = W (OC, C) · in (C, N) + b (OC) [+ residual (OC, N)]; bias and residual may be
// null. The product adds onto the bias and the residual. `scratch` holds c · oc elements (W
// column-major, transformer/matrix_product.hpp).
template <class T>
void linear_forward(T* out, const T* in, const T* weight, const T* bias, int tokens, int c, int oc,
                    T* scratch, const T* residual = nullptr) {
  ConstMatrixMap<T> x(in, c, tokens);
  MatrixMap<T> y(out, oc, tokens);
  if (oc >= 4 * tokens && !residual) {
    // Many more outputs than tokens (a vocabulary head over a few scored positions): chunks of
    // output rows, so that each reads its slice of W once instead of every chunk all of W.
#pragma omp parallel for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [row, rows] = token_chunk(k, oc);
      T* w_k = scratch + static_cast<std::ptrdiff_t>(row) * c;  // (oc_k, C)
      copy_transposed(w_k, rows, weight + static_cast<std::ptrdiff_t>(row) * c, c, c, rows);
      multiply(out + row, oc, w_k, rows, in, 1, c, rows, tokens, c, false,
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
      multiply(y_k.data(), oc, scratch, oc, x.col(begin).data(), 1, c, oc, count, c,
               residual != nullptr, residual ? nullptr : bias);
    }
  }
}

// out[i] (+)= Σ_k partials[k · size + i] over the kTokenChunks chunks, in chunk order (onto out's
// values with `accumulate`, else overwriting them).
template <class T>
void add_chunk_partials(T* out, const T* partials, std::size_t size, bool accumulate) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(size);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    T sum = accumulate ? out[i] : T(0);
    for (int k = 0; k < kTokenChunks; ++k) sum += partials[k * size + i];
    out[i] = sum;
  }
}

// Differentiates `y = W x + b`:  din = Wᵀ dout (overwritten, if non-null), dW += dout xᵀ,
// db += Σ_n dout. `scratch` holds linear_backward_scratch(c, oc) elements. With many more outputs
// than tokens (a vocabulary head over a few scored positions) the chunks are output rows instead:
// each writes its rows of dW, one product over every token with no partial sums, and a partial
// din from its slice of W; the partials are added in chunk order.
template <class T>
void linear_backward(T* din, T* dweight, T* dbias, const T* dout, const T* in, const T* weight,
                     int tokens, int c, int oc, T* scratch) {
  ConstMatrixMap<T> w_t(weight, c, oc);
  ConstMatrixMap<T> x(in, c, tokens);
  ConstMatrixMap<T> dy(dout, oc, tokens);
  if (oc >= 4 * tokens) {
    const std::size_t part = static_cast<std::size_t>(c) * tokens;  // ≤ c · oc / 4
#pragma omp parallel for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [row, rows] = token_chunk(k, oc);
      if (din)  // (C, oc_k)(oc_k, N)
        multiply(MatrixMap<T>(scratch + k * part, c, tokens), w_t.middleCols(row, rows),
                 dy.middleRows(row, rows));
      multiply_transposed(MatrixMap<T>(dweight, c, oc).middleCols(row, rows), x,
                          dy.middleRows(row, rows), true);  // (C, N)(N, oc_k)
    }
    if (din) add_chunk_partials(din, scratch, part, false);
    if (dbias) add_token_sums(dbias, dout, oc, tokens);
    return;
  }
  const std::size_t block = static_cast<std::size_t>(c) * oc;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < kTokenChunks; ++k) {
    const auto [begin, count] = token_chunk(k, tokens);
    MatrixMap<T> partial(scratch + k * block, c, oc);
    if (count == 0) {
      partial.setZero();
      continue;
    }
    if (din)  // (C, OC)(OC, n_k)
      multiply(MatrixMap<T>(din, c, tokens).middleCols(begin, count), w_t,
               dy.middleCols(begin, count));
    multiply_transposed(partial, x.middleCols(begin, count),
                        dy.middleCols(begin, count));  // (C, n_k)(n_k, OC)
  }
  add_chunk_partials(dweight, scratch, block, true);
  if (dbias) add_token_sums(dbias, dout, oc, tokens);
}

}  // namespace cpm
