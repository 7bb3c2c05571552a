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

// Differentiates `y = wte[token] + wpe[t]`: dwte[token] += dy, dwpe[t] += dy (serial: tokens
// repeat); dwpe null without position embedding.
template <class T>
void embedding_backward(T* dwte, T* dwpe, const T* dout, const int* tokens, int batch, int length,
                        int c) {
  for (int n = 0; n < batch * length; ++n) {
    const T* dy = dout + static_cast<std::ptrdiff_t>(n) * c;
    T* token_row = dwte + static_cast<std::ptrdiff_t>(tokens[n]) * c;
    for (int i = 0; i < c; ++i) token_row[i] += dy[i];
    if (!dwpe) continue;
    T* position_row = dwpe + static_cast<std::ptrdiff_t>(n % length) * c;
    for (int i = 0; i < c; ++i) position_row[i] += dy[i];
  }
}

}  // namespace cpm
