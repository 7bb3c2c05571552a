#pragma once
// Token embedding plus learned position embedding: out(:, b, t) = wte[token(b, t)] + wpe[t].
// A null wpe (dwpe) means a model without position embedding: out(:, b, t) = wte[token(b, t)].
#include <algorithm>
#include <cstddef>

namespace cpm {

// out (C, B·L); tokens (B·L) row-major (batch, position); wte (V, C), wpe (L_max, C) row-major or
// null.
template <class T>
void embedding_forward(T* out, const int* tokens, const T* wte, const T* wpe, int batch, int length,
                       int c) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch * length; ++n) {
    const T* token_row = wte + static_cast<std::ptrdiff_t>(tokens[n]) * c;
    T* y = out + static_cast<std::ptrdiff_t>(n) * c;
    if (!wpe) {
      std::copy_n(token_row, c, y);
      continue;
    }
    const T* position_row = wpe + static_cast<std::ptrdiff_t>(n % length) * c;
    for (int i = 0; i < c; ++i) y[i] = token_row[i] + position_row[i];
  }
}

// Differentiates `y = wte[token] + wpe[t]`: dwte[token] += dy, dwpe[t] += dy; dwpe null without
// position embedding. Tokens repeat, so the threads split the channels (blocks of 16, one cache
// line of floats) and each channel sums its tokens in order, as one thread would.
template <class T>
void embedding_backward(T* dwte, T* dwpe, const T* dout, const int* tokens, int batch, int length,
                        int c) {
  constexpr int kBlock = 16;
  const int n_tokens = batch * length;
#pragma omp parallel for schedule(static) if (static_cast <long>(n_tokens) * c >= 32768)
  for (int i0 = 0; i0 < c; i0 += kBlock) {
    const int width = std::min(kBlock, c - i0);
    for (int n = 0; n < n_tokens; ++n) {
      const T* dy = dout + static_cast<std::ptrdiff_t>(n) * c + i0;
      T* token_row = dwte + static_cast<std::ptrdiff_t>(tokens[n]) * c + i0;
      for (int i = 0; i < width; ++i) token_row[i] += dy[i];
      if (!dwpe) continue;
      T* position_row = dwpe + static_cast<std::ptrdiff_t>(n % length) * c + i0;
      for (int i = 0; i < width; ++i) position_row[i] += dy[i];
    }
  }
}

}  // namespace cpm
