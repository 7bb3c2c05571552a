#pragma once
// Double-precision SIMD through xsimd (Debian: libxsimd-dev), with what the pair loops need: 1/x,
// 1/√x and x^p. With AVX-512 the hardware estimates (vrcp14pd / vrsqrt14pd, relative error below
// 2⁻¹⁴) are corrected by one higher-order step, leaving an error of order e⁴ ≈ 2⁻⁵⁶, i.e. full
// double precision, at a fraction of the cost of a division or square root. Below AVX-512 there
// are no double-precision estimates, and a division or square root it is (see reciprocal()).
// simd_instruction_set() names the target the build compiled for.
//
// GCC 12 reports a false "used uninitialized" inside its own AVX-512 intrinsic headers when xsimd
// inlines them (the `__m512d __Y = __Y` idiom); it is silenced for those headers only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace cpm {

using SimdDouble = xsimd::batch<double>;  // the widest register the build targets (-march)
// Structure-of-arrays buffers of the pair loops, aligned for full-width loads.
using AlignedDoubles = std::vector<double, xsimd::aligned_allocator<double, 64>>;
// Below this many particles (about 10⁶ pairs, well under a millisecond) one thread runs a pair
// loop: a team would cost more in start-up and barriers than it saves, and far more when the
// machine is shared and a waiting thread loses its core.
constexpr long kPairLoopParallelParticles = 1500;
using SimdMask = xsimd::batch_bool<double>;

// The SIMD instruction set of this build: "AVX-512F", "AVX2+FMA", "AVX", "SSE4.2", "SSE2" or
// "none" (the widest the compiler was allowed; the build uses -march=native).
constexpr const char* simd_instruction_set() {
#if defined(__AVX512F__)
  return "AVX-512F";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#elif defined(__AVX__)
  return "AVX";
#elif defined(__SSE4_2__)
  return "SSE4.2";
#elif defined(__SSE2__)
  return "SSE2";
#else
  return "none";
#endif
}

#if defined(__AVX512F__)
namespace simd_detail {

inline SimdDouble reciprocal_estimate(const SimdDouble& x) {
  return xsimd::reciprocal(x);
}

// xsimd 8.1 maps rsqrt for double to AVX-512ER, which AMD/Intel client parts lack; use the
// AVX-512F estimate directly.
inline SimdDouble reciprocal_sqrt_estimate(const SimdDouble& x) {
  static_assert(SimdDouble::size == 8, "AVX-512 double registers hold 8 lanes");
  return _mm512_maskz_rsqrt14_pd(0xFF, x);  // the zero-masked form avoids a GCC 12 false warning
}

}  // namespace simd_detail
#endif

// z − x·y in one fused instruction. (xsimd 8.1 forms it as (0 − x)·y + z, which costs an extra
// subtraction the compiler may not remove, as 0 − x differs from −x for x = 0.)
inline SimdDouble fnma(const SimdDouble& x, const SimdDouble& y, const SimdDouble& z) {
#if defined(__AVX512F__)
  return _mm512_fnmadd_pd(x, y, z);
#elif defined(__AVX2__) && defined(__FMA__)
  return _mm256_fnmadd_pd(x, y, z);
#else
  return xsimd::fnma(x, y, z);
#endif
}

// x·y − z in one fused instruction (xsimd 8.1 forms it as a product and a subtraction).
inline SimdDouble fms(const SimdDouble& x, const SimdDouble& y, const SimdDouble& z) {
#if defined(__AVX512F__)
  return _mm512_fmsub_pd(x, y, z);
#elif defined(__AVX2__) && defined(__FMA__)
  return _mm256_fmsub_pd(x, y, z);
#else
  return xsimd::fma(x, y, -z);
#endif
}

// 1/x. AVX-512: with y₀ ≈ 1/x and e = 1 − x y₀,  1/x = y₀ / (1 − e) = y₀ (1 + e + e² + e³)
// + O(e⁴). Elsewhere the division, correctly rounded: on AVX2 (Zen 3) the single-precision
// estimate _mm_rcp_ps (12 bits), converted and refined to full precision (to e⁴), made the log
// kernel's pair loop twice as slow as the division, whose unit works beside the multiply-adds.
inline SimdDouble reciprocal(const SimdDouble& x) {
#if defined(__AVX512F__)
  const SimdDouble y0 = simd_detail::reciprocal_estimate(x);
  const SimdDouble e = fnma(x, y0, SimdDouble(1.0));
  const SimdDouble series = xsimd::fma(xsimd::fma(e, e, e), e, e);  // e + e² + e³
  return xsimd::fma(y0, series, y0);
#else
  return SimdDouble(1.0) / x;
#endif
}

// 1/√x. AVX-512: with y₀ ≈ 1/√x and e = 1 − x y₀²,  1/√x = y₀ (1 − e)^{−1/2}
//     = y₀ (1 + e/2 + 3e²/8 + 5e³/16 + 35e⁴/128) + O(e⁵).
// Elsewhere a square root and a division (two roundings): on AVX2 (Zen 3) the estimate
// _mm_rsqrt_ps refined the same way was slower in every pair loop that uses it (the conversions
// and the refinement lengthen the dependency chain more than the square root does).
inline SimdDouble reciprocal_sqrt(const SimdDouble& x) {
#if defined(__AVX512F__)
  const SimdDouble y0 = simd_detail::reciprocal_sqrt_estimate(x);
  const SimdDouble e = fnma(x * y0, y0, SimdDouble(1.0));
  SimdDouble p = xsimd::fma(e, SimdDouble(35.0 / 128.0), SimdDouble(5.0 / 16.0));
  p = xsimd::fma(p, e, SimdDouble(3.0 / 8.0));
  p = xsimd::fma(p, e, SimdDouble(0.5));
  return xsimd::fma(y0 * e, p, y0);
#else
  return SimdDouble(1.0) / xsimd::sqrt(x);
#endif
}

// scale · x^p for x > 0 (normal, finite) and a fixed exponent p, without a division or a call to
// exp and log. With x = m · 2^e, m ∈ [1, 2) (AVX-512 getmant/getexp), the top four bits of its
// fraction pick one of 16 centres c_i = 1 + (2i + 1)/32; with r_i = 1/c_i rounded to double,
//     p log₂x = p e + p log₂(1/r_i) + p log₂(1 + u),   u = m r_i − 1 (one fused multiply-add),
// |u| ≤ 1/32, log(1 + u) = u g(u) with g by a degree-7 polynomial (Chebyshev fit, absolute
// error of u g below 3·10⁻¹⁷), and p log₂(1/r_i) read from a table made in long double for this p.
// Writing p e = n + f with n an integer (f exactly, by one fused multiply-add) and z = f + p log₂m
// = k + j/16 + v with k, j integers, 0 ≤ j < 16 and |v| ≤ 1/32 (one rounding by adding
// 1.5 · 2⁴⁸, which leaves 16 z rounded in the low bits), the result is
//     2^{n+k} · (scale · 2^{j/16}) · 2^v,
// the bracket from a table and 2^v by a degree-6 polynomial (Chebyshev fit, relative error
// 7·10⁻¹⁸). The 16-entry tables are looked up by vpermt2pd (two registers of 8). About 32 vector
// operations, 19 of them multiply-adds or products (a t = (m − 1)/(m + 1) series with a refined
// reciprocal and a degree-10 2^v on |v| ≤ 1/2 took 39 and 26). Against long double powl the
// result is within 6·10⁻¹⁶ relative for x ∈ [10⁻⁸, 10⁸] (tests/solvers/simd_math_test.cpp).
// That is the AVX-512 path; AVX2 has its own (avx2_power(), below the class), and other targets
// use xsimd's exp(p log x).
class SimdPower {
 public:
#if defined(__AVX512F__)
  SimdPower(double p, double scale) : p_(p) {
    constexpr long double ln2 = 0.693147180559945309417232121458176568L;
    constexpr double g[kLogTerms] = {0.9999999999999992092, -0.4999999999999992883,
                                     0.3333333333592441455, -0.2500000000233204105,
                                     0.1999998673545297748, -0.1666665472825626057,
                                     0.143074395397657217,  -0.1251955312667663041};
    constexpr double exp2[kExpTerms] = {1.0,
                                        0.6931471805599468631,
                                        0.240226506959100847,
                                        0.05550410865209357225,
                                        0.009618129106525681666,
                                        0.001333381881538923932,
                                        0.0001540375624545770872};
    for (int k = 0; k < kLogTerms; ++k) log_[k] = static_cast<double>(p / ln2 * g[k]);
    for (int k = 0; k < kExpTerms; ++k) exp_[k] = exp2[k];
    for (int i = 0; i < kTable; ++i) {
      const double r = 1.0 / (1.0 + (2 * i + 1) / 32.0);
      inverse_centre_[i] = r;
      p_log2_centre_[i] = static_cast<double>(-(p * std::log2(static_cast<long double>(r))));
      scaled_exp2_[i] =
          static_cast<double>(scale * std::exp2(i / static_cast<long double>(kTable)));
    }
  }
#elif defined(__AVX2__) && defined(__FMA__)
  SimdPower(double p, double scale);
#else
  SimdPower(double p, double scale) : p_(p), scale_(scale) {}
#endif

  SimdDouble operator()(const SimdDouble& x) const {
#if defined(__AVX512F__)
    // (The zero-masked intrinsics avoid GCC 12's false "uninitialized" warning.)
    const SimdDouble m = _mm512_maskz_getmant_pd(0xFF, x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
    const SimdDouble e = _mm512_maskz_getexp_pd(0xFF, x);
    // vpermt2pd reads the low 4 bits of each index: here the top 4 bits of m's fraction.
    const __m512i i = _mm512_maskz_srli_epi64(0xFF, _mm512_castpd_si512(m), 48);
    const SimdDouble r = lookup(inverse_centre_, i), p_log_centre = lookup(p_log2_centre_, i);
    const SimdDouble u = fms(m, r, SimdDouble(1.0));
    SimdDouble series(log_[kLogTerms - 1]);
    for (int k = kLogTerms - 2; k >= 0; --k) series = xsimd::fma(series, u, SimdDouble(log_[k]));
    const SimdDouble p(p_);
    const SimdDouble n =
        _mm512_maskz_roundscale_pd(0xFF, p * e, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const SimdDouble z = xsimd::fma(u, series, fms(p, e, n) + p_log_centre);
    const SimdDouble shifter(0x1.8p48);  // its unit in the last place is 1/16
    const SimdDouble shifted = z + shifter;
    const SimdDouble kj = shifted - shifter;  // k + j/16
    const SimdDouble v = z - kj;
    SimdDouble y(exp_[kExpTerms - 1]);
    for (int k = kExpTerms - 2; k >= 0; --k) y = xsimd::fma(y, v, SimdDouble(exp_[k]));
    y *= lookup(scaled_exp2_, _mm512_castpd_si512(shifted));
    // scalef multiplies by 2^⌊n + k + j/16⌋ = 2^{n+k}.
    return _mm512_maskz_scalef_pd(0xFF, y, n + kj);
#elif defined(__AVX2__) && defined(__FMA__)
    return avx2_power(x);
#else
    return SimdDouble(scale_) * xsimd::exp(SimdDouble(p_) * xsimd::log(x));
#endif
  }

 private:
  static constexpr int kLogTerms = 8, kExpTerms = 7, kTable = 16;
#if defined(__AVX512F__)
  static SimdDouble lookup(const double* table, __m512i index) {
    return _mm512_permutex2var_pd(_mm512_loadu_pd(table), index, _mm512_loadu_pd(table + 8));
  }
#endif
#if defined(__AVX512F__)
  double p_;
  double log_[kLogTerms];                      // (p / ln 2) · (coefficients of g)
  double exp_[kExpTerms];                      // coefficients of 2^v
  alignas(64) double inverse_centre_[kTable];  // r_i
  alignas(64) double p_log2_centre_[kTable];   // −p log₂r_i
  alignas(64) double scaled_exp2_[kTable];     // scale · 2^{i/16}
#elif defined(__AVX2__) && defined(__FMA__)
  static constexpr int kAtanhTerms = 7, kExp2Terms = 12;
  SimdDouble avx2_power(const SimdDouble& x) const;
  double scale_;
  // Registers of broadcast constants, so that the multiply-adds read them from memory directly.
  SimdDouble p_vector_;
  SimdDouble log_scale_;                // c = 2p / ln 2
  SimdDouble atanh_[kAtanhTerms];       // c · (coefficients of H)
  SimdDouble exp2_[kExp2Terms];         // scale · (coefficients of 2^v)
  __m256i range_offset_, range_limit_;  // the x of the fast path, as an unsigned range of bits
#else
  double p_, scale_;
#endif
};

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
inline SimdPower::SimdPower(double p, double scale) : scale_(scale), p_vector_(p) {
  // Minimax fits (relative error, Remez exchange in 50 digits): H(w) = (atanh(√w)/√w − 1)/w on
  // 0 ≤ w ≤ (3 − 2√2)², relative error 4.5·10⁻¹⁶ (on a term below 0.002 |2p / ln 2|), and 2^v on
  // |v| ≤ 0.55, relative error 9.6·10⁻¹⁸.
  constexpr long double h[kAtanhTerms] = {0.3333333333333334849791L,  0.19999999999949587669L,
                                          0.1428571431305308872721L,  0.1111110555791313350363L,
                                          0.09091445184663991417949L, 0.07665842001218895503664L,
                                          0.07308437863683117703322L};
  constexpr long double exp2[kExp2Terms] = {
      0.9999999999999999910049L,    0.6931471805599453752418L,     0.2402265069591028990454L,
      0.05550410866481728814143L,   0.009618129107542876313737L,   0.001333355814720217893839L,
      0.0001540353051545409837888L, 0.00001525273324815492303517L, 0.000001321540830978327896286L,
      1.0178249933957781603e-7L,    7.078119915608207370038e-9L,   4.433129885645152133549e-10L};
  constexpr long double ln2 = 0.693147180559945309417232121458176568L;
  const long double c = 2.0L * p / ln2;
  log_scale_ = SimdDouble(static_cast<double>(c));
  for (int k = 0; k < kAtanhTerms; ++k) atanh_[k] = SimdDouble(static_cast<double>(c * h[k]));
  for (int k = 0; k < kExp2Terms; ++k) exp2_[k] = SimdDouble(static_cast<double>(scale * exp2[k]));
  // The fast path is exact where scale · x^p lies within 2^±1000 and x is a normal double:
  // there, adding n + k to the exponent field cannot leave the normal range. As integers, the
  // bits of positive doubles are ordered like the doubles, so lo ≤ x ≤ hi is one unsigned
  // comparison of bits(x) − bits(lo) with bits(hi) − bits(lo), made signed by adding 2⁶³.
  const double margin = 1000.0 - std::fabs(std::log2(scale));
  double lo = -1022.0, hi = 1023.0;  // log₂ of the normal doubles
  if (p != 0.0) {
    lo = std::max(lo, std::ceil(-margin / std::fabs(p)));
    hi = std::min(hi, std::floor(margin / std::fabs(p)));
  }
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const std::uint64_t low = bits(std::ldexp(1.0, static_cast<int>(lo)));
  const std::uint64_t high = lo <= hi ? bits(std::ldexp(1.0, static_cast<int>(hi))) : low - 1;
  constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  range_offset_ = _mm256_set1_epi64x(static_cast<long long>(sign - low));
  range_limit_ = _mm256_set1_epi64x(static_cast<long long>(sign + (high - low)));
}

// scale · x^p for AVX2 (4 lanes), without tables (AVX2 has no fast 16-entry lookup): with
// x = m · 2^e, m ∈ [√½, √2) from integer operations on the bits, and t = (m − 1)/(m + 1),
// |t| ≤ 3 − 2√2, log₂m = (2 / ln 2) atanh t = (2 / ln 2) (t + t w H(w)), w = t², so
//     p log₂x = p e + c t + c t w H(w),   c = 2p / ln 2,   H of degree 6.
// p e = n + f exactly (n rounded to an integer by adding 1.5 · 2⁵², f by one fused multiply-
// add); k is the integer nearest f + c t, and v = (f − k) + c t + c t w H(w) (|v| ≤ 1/2 +
// 0.005 |p|, c t entering through one fused multiply-add, not rounded on its own); then
//     scale · x^p = 2^{n+k} · scale · 2^v,
// scale · 2^v by a degree-11 polynomial (scale · 2^v = scale + v R(v)), and n + k added to its
// exponent field. Both polynomials are evaluated by Estrin's scheme, and k is found while H is:
// what limits the pair loops on AVX2 (Zen 3) is the length of the dependency chain more than the
// count of operations (47: 28 multiply-adds or products, one division, 18 additions and integer
// operations). Against long double powl: within 4.3·10⁻¹⁶ relative for s = 0.3 … 4 over
// x ∈ [10⁻⁸, 10⁸], 6.3·10⁻¹⁶ for s = 10 (tests/solvers/simd_math_test.cpp).
// Lanes whose result would leave 2^±1000, or whose x is not a positive normal double, are
// recomputed by xsimd's exp and log (correct infinities, zeros and NaN there, relative error
// up to about 10⁻¹³ near overflow); the pair loops never see them.
inline SimdDouble SimdPower::avx2_power(const SimdDouble& x) const {
  // x = m · 2^e: offsetting the bits by those of 1 − √½ carries into the exponent field exactly
  // when the fraction is at least √2 − 1, so the field holds e + 1023 and the fraction m's.
  constexpr long long kOne = 0x3ff0000000000000, kSqrtHalf = 0x3fe6a09e667f3bcd;
  const __m256i bits = _mm256_castpd_si256(x);
  const __m256i offset = _mm256_add_epi64(bits, _mm256_set1_epi64x(kOne - kSqrtHalf));
  const SimdDouble m = _mm256_castsi256_pd(
      _mm256_add_epi64(_mm256_and_si256(offset, _mm256_set1_epi64x(0x000fffffffffffff)),
                       _mm256_set1_epi64x(kSqrtHalf)));
  // e as a double: the field as the low bits of 2⁵², minus 2⁵² + 1023.
  const SimdDouble e =
      SimdDouble(_mm256_castsi256_pd(
          _mm256_or_si256(_mm256_srli_epi64(offset, 52), _mm256_set1_epi64x(0x4330000000000000)))) -
      SimdDouble(0x1p52 + 1023.0);
  const SimdDouble shifter(0x1.8p52);  // adding it rounds to an integer, left in the low bits
  const SimdDouble n_shifted = xsimd::fma(p_vector_, e, shifter);
  const SimdDouble f = fms(p_vector_, e, n_shifted - shifter);
  const SimdDouble t = (m - SimdDouble(1.0)) / (m + SimdDouble(1.0));
  const SimdDouble k_shifted = xsimd::fma(t, log_scale_, f) + shifter;
  const SimdDouble f_minus_k = f - (k_shifted - shifter);
  const SimdDouble w = t * t, w2 = w * w, w4 = w2 * w2;
  const SimdDouble ch = xsimd::fma(
      xsimd::fma(atanh_[6], w2, xsimd::fma(atanh_[5], w, atanh_[4])), w4,
      xsimd::fma(xsimd::fma(atanh_[3], w, atanh_[2]), w2, xsimd::fma(atanh_[1], w, atanh_[0])));
  const SimdDouble v = xsimd::fma(t * w, ch, xsimd::fma(t, log_scale_, f_minus_k));
  const SimdDouble v2 = v * v, v4 = v2 * v2;
  const SimdDouble r = xsimd::fma(
      xsimd::fma(
          xsimd::fma(exp2_[11], v2, xsimd::fma(exp2_[10], v, exp2_[9])), v4,
          xsimd::fma(xsimd::fma(exp2_[8], v, exp2_[7]), v2, xsimd::fma(exp2_[6], v, exp2_[5]))),
      v4, xsimd::fma(xsimd::fma(exp2_[4], v, exp2_[3]), v2, xsimd::fma(exp2_[2], v, exp2_[1])));
  const SimdDouble y = xsimd::fma(v, r, exp2_[0]);
  // The low bits of n_shifted + k_shifted (as integers) are n + k; shifted into the exponent
  // field, the rest falls off.
  const __m256i n_plus_k =
      _mm256_add_epi64(_mm256_castpd_si256(n_shifted), _mm256_castpd_si256(k_shifted));
  const SimdDouble result = _mm256_castsi256_pd(
      _mm256_add_epi64(_mm256_castpd_si256(y), _mm256_slli_epi64(n_plus_k, 52)));
  const __m256i outside = _mm256_cmpgt_epi64(_mm256_add_epi64(bits, range_offset_), range_limit_);
  if (!_mm256_testz_si256(outside, outside)) [[unlikely]]
    return xsimd::select(SimdMask(_mm256_castsi256_pd(outside)),
                         SimdDouble(scale_) * xsimd::exp(p_vector_ * xsimd::log(x)), result);
  return result;
}
#endif

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
