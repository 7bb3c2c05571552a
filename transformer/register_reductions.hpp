#pragma once
// Sums, dot products and maxima of the short contiguous vectors of attention (one token's d_head or
// D_φ entries) in vector registers: one register of partial sums over full registers from the first
// element, the last n mod width entries through a zero-padded register, then xsimd's hadd.
// The order of the additions depends on n and the instruction set alone, not on where the data
// lie in memory (Eigen's reductions start at the first aligned element) or on the thread.
// xsimd's hadd of doubles and the float widening with AVX-512 go through intrinsics whose
// _mm256_undefined_pd GCC 12 reports as (maybe) uninitialised wherever they are inlined: not about
// cpm's code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#if defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace cpm {

namespace register_reduction_detail {

// x[0..count) in the first lanes of a register, zero in the others (count < the width).
template <class T>
xsimd::batch<T> load_padded(const T* x, std::ptrdiff_t count) {
  alignas(64) T lane[xsimd::batch<T>::size] = {};
  std::copy_n(x, count, lane);
  return xsimd::batch<T>::load_aligned(lane);
}

// The floats x[0..width) widened into one register of doubles.
inline xsimd::batch<double> load_widened(const float* x) {
#if defined(__AVX512F__)
  return _mm512_cvtps_pd(_mm256_loadu_ps(x));
#elif defined(__AVX__)
  return _mm256_cvtps_pd(_mm_loadu_ps(x));
#else
  alignas(64) double lane[xsimd::batch<double>::size];
  std::copy_n(x, xsimd::batch<double>::size, lane);
  return xsimd::batch<double>::load_aligned(lane);
#endif
}

}  // namespace register_reduction_detail

// The largest lane of a register (exact in any order).
template <class T>
T lanes_maximum(const xsimd::batch<T>& lanes) {
#if defined(__AVX512F__)
  // The halves, quarters, pairs and neighbours of the lanes exchanged and compared in turn.
  if constexpr (std::is_same_v<T, float> && xsimd::batch<T>::size == 16) {
    __m512 v = lanes;
    v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0x4e));
    v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0xb1));
    v = _mm512_max_ps(v, _mm512_permute_ps(v, 0x4e));
    v = _mm512_max_ps(v, _mm512_permute_ps(v, 0xb1));
    return _mm512_cvtss_f32(v);
  }
  if constexpr (std::is_same_v<T, double> && xsimd::batch<T>::size == 8) {
    __m512d v = lanes;
    v = _mm512_max_pd(v, _mm512_shuffle_f64x2(v, v, 0x4e));
    v = _mm512_max_pd(v, _mm512_shuffle_f64x2(v, v, 0xb1));
    v = _mm512_max_pd(v, _mm512_permute_pd(v, 0x55));
    return _mm512_cvtsd_f64(v);
  }
#endif
  alignas(64) T lane[xsimd::batch<T>::size];
  lanes.store_aligned(lane);
  return *std::max_element(lane, lane + xsimd::batch<T>::size);
}

// Σ_{i<n} x_i.
template <class T>
T contiguous_sum(const T* x, std::ptrdiff_t n) {
  using Batch = xsimd::batch<T>;
  constexpr std::ptrdiff_t width = Batch::size;
  Batch sum(T(0));
  std::ptrdiff_t i = 0;
  for (; i + width <= n; i += width) sum += Batch::load_unaligned(x + i);
  if (i < n) sum += register_reduction_detail::load_padded(x + i, n - i);
  return xsimd::hadd(sum);
}

// Σ_{i<n} x_i y_i, one FMA per register.
template <class T>
T contiguous_dot(const T* x, const T* y, std::ptrdiff_t n) {
  using namespace register_reduction_detail;
  using Batch = xsimd::batch<T>;
  constexpr std::ptrdiff_t width = Batch::size;
  Batch sum(T(0));
  std::ptrdiff_t i = 0;
  for (; i + width <= n; i += width)
    sum = xsimd::fma(Batch::load_unaligned(x + i), Batch::load_unaligned(y + i), sum);
  if (i < n) sum = xsimd::fma(load_padded(x + i, n - i), load_padded(y + i, n - i), sum);
  return xsimd::hadd(sum);
}

// Σ_{i<n} x_i y_i in double for float x (each x_i widened exactly) and double y.
template <class T>
double contiguous_dot_in_double(const T* x, const double* y, std::ptrdiff_t n) {
  if constexpr (std::is_same_v<T, double>) {
    return contiguous_dot(x, y, n);
  } else {
    using namespace register_reduction_detail;
    using Batch = xsimd::batch<double>;
    constexpr std::ptrdiff_t width = Batch::size;
    Batch sum(0.0);
    std::ptrdiff_t i = 0;
    for (; i + width <= n; i += width)
      sum = xsimd::fma(load_widened(x + i), Batch::load_unaligned(y + i), sum);
    if (i < n) {
      alignas(64) double lane[width] = {};
      std::copy_n(x + i, n - i, lane);
      sum = xsimd::fma(Batch::load_aligned(lane), load_padded(y + i, n - i), sum);
    }
    return xsimd::hadd(sum);
  }
}

}  // namespace cpm

#pragma GCC diagnostic pop
