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

// scale · x^p for x > 0 (normal, finite) and a fixed exponent p, without a division or a call to
// exp and log. With x = m · 2^e, m ∈ [3/4, 3/2) (AVX-512 getmant/getexp),
//     p log₂x = p e + p log₂m,   log₂m = (2 / ln 2) t g(t²),   g(u) = atanh(√u)/√u,
// t = (m − 1)/(m + 1) ∈ [−1/7, 1/5], g by a degree-7 polynomial on [0, 1/25] (Chebyshev fit,
// relative error 3·10⁻¹⁷). Writing p e = n + f with n an integer (f exactly, by one fused
// multiply-add) and z = f + p log₂m = k + v with k an integer, |v| ≤ 1/2, the result is
// 2^{n+k} · scale · 2^v, 2^v by a degree-10 polynomial on [−1/2, 1/2] (Chebyshev fit, relative
// error 3·10⁻¹⁶). The coefficients absorb p and scale, so an evaluation is about 39 vector
// operations; against long double powl the result is within 6·10⁻¹⁵ relative for
// p ∈ [−2.5, −1] and x ∈ [e⁻³⁰, e⁴] (xsimd's exp(p log x): 7·10⁻¹⁵).
class SimdPower {
 public:
  SimdPower(double p, double scale) : p_(p) {
    constexpr double ln2 = 0.693147180559945309417232121458176568;
    constexpr double g[kLogTerms] = {1.0,
                                     0.33333333333337684,
                                     0.19999999997718426,
                                     0.1428571474076452,
                                     0.11111066625651787,
                                     0.09093263534125967,
                                     0.07623676457223913,
                                     0.07693501499136236};
    constexpr double exp2[kExpTerms] = {1.0,
                                        0.69314718055995,
                                        0.24022650695910097,
                                        0.05550410866444772,
                                        0.009618129107606888,
                                        0.0013333558230164974,
                                        0.0001540353044173605,
                                        1.5252657260200837e-05,
                                        1.321544258792169e-06,
                                        1.0208690299958306e-07,
                                        7.072585949269223e-09};
    for (int k = 0; k < kLogTerms; ++k) log_[k] = 2.0 * p / ln2 * g[k];
    for (int i = 0; i < kExpTerms; ++i) exp_[i] = scale * exp2[i];
  }

  SimdDouble operator()(const SimdDouble& x) const {
#if defined(__AVX512F__)
    // (The zero-masked intrinsics avoid GCC 12's false "uninitialized" warning.)
    const __m512d mantissa =
        _mm512_maskz_getmant_pd(0xFF, x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
    // getexp gives ⌊log₂x⌋; the mantissas in [1.5, 2) were halved, so their exponent is one more.
    const __mmask8 halved = _mm512_cmp_pd_mask(mantissa, _mm512_set1_pd(1.0), _CMP_LT_OQ);
    const __m512d e0 = _mm512_maskz_getexp_pd(0xFF, x);
    const SimdDouble e = _mm512_mask_add_pd(e0, halved, e0, _mm512_set1_pd(1.0));
    const SimdDouble m(mantissa);
    const SimdDouble t = (m - SimdDouble(1.0)) * reciprocal(m + SimdDouble(1.0));
    const SimdDouble t2 = t * t;
    SimdDouble series(log_[kLogTerms - 1]);
    for (int k = kLogTerms - 2; k >= 0; --k) series = xsimd::fma(series, t2, SimdDouble(log_[k]));
    const SimdDouble p_log_m = t * series;  // p log₂m
    const SimdDouble p(p_);
    const SimdDouble n = round_to_integer(p * e);
    const SimdDouble z = xsimd::fma(p, e, -n) + p_log_m;
    const SimdDouble k = round_to_integer(z);
    const SimdDouble v = z - k;
    SimdDouble y(exp_[kExpTerms - 1]);
    for (int i = kExpTerms - 2; i >= 0; --i) y = xsimd::fma(y, v, SimdDouble(exp_[i]));
    return _mm512_scalef_pd(y, n + k);
#else
    return SimdDouble(exp_[0]) * xsimd::exp(SimdDouble(p_) * xsimd::log(x));
#endif
  }

 private:
  static constexpr int kLogTerms = 8, kExpTerms = 11;
#if defined(__AVX512F__)
  static SimdDouble round_to_integer(const SimdDouble& x) {
    return _mm512_maskz_roundscale_pd(0xFF, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
#endif
  double p_;
  double log_[kLogTerms];  // (2p / ln 2) · (coefficients of g)
  double exp_[kExpTerms];  // scale · (coefficients of 2^v)
};

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
