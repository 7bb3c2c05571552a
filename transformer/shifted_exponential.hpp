#pragma once
// The exponentials of a softmax row, out_j = exp(z_j − shift), and their sum, vectorised and in an
// order that depends on n alone: exponential_lanes on full registers from the row's first element
// (the last partial register through a padded copy), so that each value is the same wherever the
// row lies in memory; the sum by interleaved_sum.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "transformer/interleaved_sum.hpp"
#include "transformer/register_reductions.hpp"

namespace cpm {

#ifdef __AVX512F__
// Every lane of a 16-float register. The exponentials below call the masked forms of max,
// roundscale and scalef with it and their own input as the pass-through: the same instructions
// as the unmasked forms, whose pass-through GCC 12 fills with a deliberately undefined register
// and then reports as uninitialized wherever the function is inlined into a product's tile.
inline constexpr __mmask16 kAllLanes = 0xFFFF;
#endif

// e^x in every lane, for finite x ≤ 88 or x = −∞ (the shifted exponents of softmax rows, favor
// features and masked scores). Floats with AVX-512 take xsimd's own steps, x = k ln 2 + r with k =
// round(x / ln 2), |r| ≤ ln 2 / 2 (ln 2 in two parts), and its degree-6 polynomial for e^r, so the
// values are xsimd::exp's wherever e^x is a normal float; only the last step differs: vscalefps
// multiplies by 2^k in one instruction, where xsimd converts k to an integer, builds 2^k from its
// bits and tests x against both ends of the range. Inputs below −110 are raised to −110, whose
// e^x rounds to zero, so that −∞ gives 0 (xsimd gives 0 below −88.4, this gives subnormals down to
// −103.3). Other types and instruction sets use xsimd::exp.
template <class Batch>
Batch exponential_lanes(const Batch& x) {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<typename Batch::value_type, float> && sizeof(Batch) == 64) {
    const __m512 a = _mm512_mask_max_ps(x, kAllLanes, x, _mm512_set1_ps(-110.0f));
    const __m512 scaled = _mm512_mul_ps(a, _mm512_set1_ps(xsimd::constants::invlog_2<float>()));
    const __m512 k = _mm512_mask_roundscale_ps(scaled, kAllLanes, scaled,
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(xsimd::constants::log_2hi<float>()), a);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(xsimd::constants::log_2lo<float>()), r);
    __m512 y = _mm512_set1_ps(0x1.6ef19ep-10f);                 // 1.3997796e-03
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.131b16p-7f));  // 8.3955629e-03
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.5552aep-5f));  // 4.1665401e-02
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.55534ap-3f));  // 1.6666277e-01
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.5f));
    y = _mm512_add_ps(_mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    return Batch(_mm512_mask_scalef_ps(y, kAllLanes, y, k));
  }
#endif
  return xsimd::exp(x);
}

// 2^x in every lane, for finite x < 127 or x = −∞ (softmax scores in base-2 units). Floats with
// AVX-512: x = k + r with k = round(x), |r| ≤ 1/2, a degree-6 polynomial for 2^r (fitted for the
// least largest relative error on [−1/2, 1/2], 1.9e-9; under one ulp after rounding) and
// vscalefps for the product with 2^k: four instructions fewer than exponential_lanes, which
// first divides by ln 2 in two parts. Inputs below −160 are raised to −160, whose 2^x rounds to
// zero, so that −∞ gives 0. Other types and instruction sets use xsimd::exp2.
template <class Batch>
Batch exponential2_lanes(const Batch& x) {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<typename Batch::value_type, float> && sizeof(Batch) == 64) {
    const __m512 a = _mm512_mask_max_ps(x, kAllLanes, x, _mm512_set1_ps(-160.0f));
    const __m512 k =
        _mm512_mask_roundscale_ps(a, kAllLanes, a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_sub_ps(a, k);
    __m512 y = _mm512_set1_ps(0x1.41d244p-13f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.5f453cp-10f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.3b2dbcp-7f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.c6aed6p-5f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.ebfbdap-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0x1.62e43p-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.0f));
    return Batch(_mm512_mask_scalef_ps(y, kAllLanes, y, k));
  }
#endif
  return xsimd::exp2(x);
}

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
    best = lanes_maximum(lanes);
  }
  for (; j < n; ++j) best = std::max(best, z[j]);
  return best;
}

// z_j ← z_j − value for j < n (n ≥ 1), returning the largest result (favor's exponents of one
// token and their shift).
template <class T>
T subtract_and_maximum(T* z, std::ptrdiff_t n, T value) {
  using Batch = xsimd::batch<T>;
  constexpr std::ptrdiff_t width = Batch::size;
  const Batch v(value);
  Batch lanes(-std::numeric_limits<T>::infinity());
  std::ptrdiff_t j = 0;
  for (; j + width <= n; j += width) {
    const Batch u = Batch::load_unaligned(z + j) - v;
    u.store_unaligned(z + j);
    lanes = xsimd::max(lanes, u);
  }
  T best = lanes_maximum(lanes);
  for (; j < n; ++j) best = std::max(best, z[j] -= value);
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
    (exponential_lanes(Batch::load_unaligned(z + j) - s) + o).store_unaligned(out + j);
  if (j < n) {
    alignas(64) T tail[width];
    std::fill_n(tail, width, -std::numeric_limits<T>::infinity());
    std::copy(z + j, z + n, tail);
    (exponential_lanes(Batch::load_aligned(tail) - s) + o).store_aligned(tail);
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
