#pragma once
// The exponentials of a softmax row, out_j = exp(z_j − shift), and their sum, vectorised and in an
// order that depends on n alone: xsimd's exp on full registers from the row's first element (the
// last partial register through a padded copy), so that each value is the same wherever the row
// lies in memory; the sum by interleaved_sum.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstddef>
#include <limits>

#include "transformer/interleaved_sum.hpp"

namespace cpm {

// max_j z_j over n ≥ 1 values, a register of lanes at a time (exact: the order of a maximum does
// not matter). std::max_element compares one element at a time.
template <class T>
T maximum_value(const T* z, std::ptrdiff_t n) {
  using Batch = xsimd::batch<T>;
  constexpr std::ptrdiff_t width = Batch::size;
  T best = z[0];
  std::ptrdiff_t j = 0;
  if (n >= width) {
    Batch lanes = Batch::load_unaligned(z);
    for (j = width; j + width <= n; j += width)
      lanes = xsimd::max(lanes, Batch::load_unaligned(z + j));
    alignas(64) T lane[width];
    lanes.store_aligned(lane);
    best = *std::max_element(lane, lane + width);
  }
  for (; j < n; ++j) best = std::max(best, z[j]);
  return best;
}

// out_j = exp(z_j − shift) + offset, j < n (out may equal z).
template <class T>
void shifted_exponential_values(T* out, const T* z, std::ptrdiff_t n, T shift, T offset = T(0)) {
  using Batch = xsimd::batch<T>;
  constexpr std::ptrdiff_t width = Batch::size;
  const Batch s(shift), o(offset);
  std::ptrdiff_t j = 0;
  for (; j + width <= n; j += width)
    (xsimd::exp(Batch::load_unaligned(z + j) - s) + o).store_unaligned(out + j);
  if (j < n) {
    alignas(64) T tail[width];
    std::fill_n(tail, width, -std::numeric_limits<T>::infinity());
    std::copy(z + j, z + n, tail);
    (xsimd::exp(Batch::load_aligned(tail) - s) + o).store_aligned(tail);
    std::copy_n(tail, n - j, out + j);
  }
}

// The same, returning Σ_j out_j (interleaved_sum).
template <class T>
double shifted_exponential(T* out, const T* z, std::ptrdiff_t n, T shift) {
  shifted_exponential_values(out, z, n, shift);
  return interleaved_sum(out, n);
}

}  // namespace cpm
