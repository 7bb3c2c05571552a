#pragma once
// Double-precision SIMD through xsimd (Debian: libxsimd-dev), with the two refined estimates the
// pair loops need: 1/x and 1/√x. The hardware estimates (AVX-512 vrcp14pd / vrsqrt14pd, relative
// error below 2⁻¹⁴) are corrected by one higher-order step, leaving an error of order e⁴ ≈ 2⁻⁵⁶,
// i.e. full double precision, at a fraction of the cost of a division or square root.
//
// GCC 12 reports a false "used uninitialized" inside its own AVX-512 intrinsic headers when xsimd
// inlines them (the `__m512d __Y = __Y` idiom); it is silenced for those headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

namespace cpm {

using SimdDouble = xsimd::batch<double>;  // the widest register the build targets (-march)
using SimdMask = xsimd::batch_bool<double>;

namespace simd_detail {

inline SimdDouble reciprocal_estimate(const SimdDouble& x) {
  return xsimd::reciprocal(x);
}

// xsimd 8.1 maps rsqrt for double to AVX-512ER, which AMD/Intel client parts lack; use the
// AVX-512F estimate directly, or an exact value where there is none (the refinement keeps it).
inline SimdDouble reciprocal_sqrt_estimate(const SimdDouble& x) {
#if defined(__AVX512F__)
  static_assert(SimdDouble::size == 8, "AVX-512 double registers hold 8 lanes");
  return _mm512_maskz_rsqrt14_pd(0xFF, x);  // the zero-masked form avoids a GCC 12 false warning
#else
  return 1.0 / xsimd::sqrt(x);
#endif
}

}  // namespace simd_detail

// z − x·y in one fused instruction. (xsimd 8.1 forms it as (0 − x)·y + z, which costs an extra
// subtraction the compiler may not remove, as 0 − x differs from −x for x = 0.)
inline SimdDouble fnma(const SimdDouble& x, const SimdDouble& y, const SimdDouble& z) {
#if defined(__AVX512F__)
  return _mm512_fnmadd_pd(x, y, z);
#else
  return xsimd::fnma(x, y, z);
#endif
}

// 1/x: with y₀ ≈ 1/x and e = 1 − x y₀,  1/x = y₀ / (1 − e) = y₀ (1 + e + e² + e³) + O(e⁴).
inline SimdDouble reciprocal(const SimdDouble& x) {
  const SimdDouble y0 = simd_detail::reciprocal_estimate(x);
  const SimdDouble e = fnma(x, y0, SimdDouble(1.0));
  const SimdDouble series = xsimd::fma(xsimd::fma(e, e, e), e, e);  // e + e² + e³
  return xsimd::fma(y0, series, y0);
}

// 1/√x: with y₀ ≈ 1/√x and e = 1 − x y₀²,  1/√x = y₀ (1 − e)^{−1/2}
//     = y₀ (1 + e/2 + 3e²/8 + 5e³/16 + 35e⁴/128) + O(e⁵).
inline SimdDouble reciprocal_sqrt(const SimdDouble& x) {
  const SimdDouble y0 = simd_detail::reciprocal_sqrt_estimate(x);
  const SimdDouble e = fnma(x * y0, y0, SimdDouble(1.0));
  SimdDouble p = xsimd::fma(e, SimdDouble(35.0 / 128.0), SimdDouble(5.0 / 16.0));
  p = xsimd::fma(p, e, SimdDouble(3.0 / 8.0));
  p = xsimd::fma(p, e, SimdDouble(0.5));
  return xsimd::fma(y0 * e, p, y0);
}

// Lanes k of a register starting at index `first` for which lo ≤ first + k < hi.
inline SimdMask lanes_in_range(double first, double lo, double hi) {
  static const SimdDouble lane = [] {
    alignas(64) double k[SimdDouble::size];
    for (std::size_t i = 0; i < SimdDouble::size; ++i) k[i] = static_cast<double>(i);
    return SimdDouble::load_aligned(k);
  }();
  const SimdDouble index = lane + SimdDouble(first);
  return (index >= SimdDouble(lo)) && (index < SimdDouble(hi));
}

}  // namespace cpm
