#pragma once
// Mean over the non-padding tokens of each sequence: pooled(:, b) = (1/len_b) Σ_{t<len_b} x(:, b,
// t). Sequences are right-padded; positions t ≥ len_b are padding.
#include <cstddef>

namespace cpm {

// pooled (C, B); in (C, B·L); lengths (B), each in [1, L]. Accumulated in double.
template <class T>
void mean_pooling_forward(T* pooled, const T* in, const int* lengths, int batch, int length,
                          int c) {
#pragma omp parallel for schedule(static)
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < c; ++i) {
      double s = 0.0;
      for (int t = 0; t < lengths[b]; ++t)
        s += in[(static_cast<std::ptrdiff_t>(b) * length + t) * c + i];
      pooled[static_cast<std::ptrdiff_t>(b) * c + i] = static_cast<T>(s / lengths[b]);
    }
  }
}

// Differentiates `pooled = (1/len) Σ_{t<len} x_t`: din(:, b, t) = dpooled(:, b)/len_b for t <
// len_b, 0 at padding (overwritten).
template <class T>
void mean_pooling_backward(T* din, const T* dpooled, const int* lengths, int batch, int length,
                           int c) {
#pragma omp parallel for schedule(static)
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < length; ++t) {
      T* dx = din + (static_cast<std::ptrdiff_t>(b) * length + t) * c;
      const T scale = t < lengths[b] ? T(1) / static_cast<T>(lengths[b]) : T(0);
      for (int i = 0; i < c; ++i) dx[i] = dpooled[static_cast<std::ptrdiff_t>(b) * c + i] * scale;
    }
  }
}

}  // namespace cpm
