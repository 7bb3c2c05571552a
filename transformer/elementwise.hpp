#pragma once
// The whole-activation passes of a training step (copies, zeroing, scaling, residual sums), each
// one parallel loop over the entries: on a (C, N) activation of a batch they cost as much as a
// layer norm, and run on one core they would leave the others waiting at every block. Below
// kParallelEntries entries (a few microseconds of work) they stay on the calling thread.
#include <cstddef>

namespace cpm {

inline constexpr std::ptrdiff_t kParallelEntries = 32768;

template <class T>
void parallel_copy(T* out, const T* in, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelEntries)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = in[i];
}

template <class T>
void parallel_zero(T* out, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelEntries)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = T(0);
}

// x *= factor.
template <class T>
void parallel_scale(T* x, T factor, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelEntries)
  for (std::ptrdiff_t i = 0; i < count; ++i) x[i] *= factor;
}

// out = a + b (out may be a or b).
template <class T>
void parallel_sum(T* out, const T* a, const T* b, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelEntries)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
}

// out = a + b ⊙ mask: a residual sum whose branch is dropped out (transformer/dropout.hpp).
template <class T>
void parallel_masked_sum(T* out, const T* a, const T* b, const T* mask, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelEntries)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = a[i] + b[i] * mask[i];
}

}  // namespace cpm
