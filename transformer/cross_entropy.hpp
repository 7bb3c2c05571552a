#pragma once
// Softmax over classes and the mean cross-entropy loss of a batch. Rows are independent and run
// in parallel; the loss adds the rows' terms in row order, so it does not depend on the threads.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "transformer/shifted_exponential.hpp"

namespace cpm {

// probs, logits (K, B), their columns ld apart (0: K, packed); row_loss (B) scratch. Returns
// −(1/B) Σ_b log p(b, y_b) if labels is non-null, else 0.
template <class T>
double cross_entropy_forward(T* probs, const T* logits, const int* labels, int batch, int classes,
                             double* row_loss, std::ptrdiff_t ld = 0) {
  const std::ptrdiff_t stride = ld > 0 ? ld : classes;
#pragma omp parallel for schedule(static) if (static_cast <long>(batch) * classes >= 32768)
  for (int b = 0; b < batch; ++b) {
    const T* z = logits + b * stride;
    T* p = probs + b * stride;
    const T shift = maximum_value(z, classes);  // constant: softmax is shift-invariant
    const double total = shifted_exponential(p, z, classes, shift);  // in T, summed in double
    const T inverse = static_cast<T>(1.0 / total);
    for (int k = 0; k < classes; ++k) p[k] *= inverse;
    row_loss[b] = labels ? (z[labels[b]] - shift) - std::log(total) : 0.0;
  }
  double loss = 0.0;
  for (int b = 0; b < batch; ++b) loss -= row_loss[b];
  return loss / batch;
}

// Differentiates `loss = −(1/B) Σ_b log softmax(z_b)[y_b]`: dlogits = (p − onehot(y)) / B, both
// with columns ld apart (0: K, packed).
template <class T>
void cross_entropy_backward(T* dlogits, const T* probs, const int* labels, int batch, int classes,
                            std::ptrdiff_t ld = 0) {
  const std::ptrdiff_t stride = ld > 0 ? ld : classes;
#pragma omp parallel for schedule(static) if (static_cast <long>(batch) * classes >= 32768)
  for (int b = 0; b < batch; ++b)
    for (int k = 0; k < classes; ++k) {
      const std::ptrdiff_t at = b * stride + k;
      dlogits[at] = (probs[at] - (k == labels[b] ? T(1) : T(0))) / static_cast<T>(batch);
    }
}

}  // namespace cpm
