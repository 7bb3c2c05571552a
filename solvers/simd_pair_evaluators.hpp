#pragma once
// The pair interactions of physics/riesz_kernel.hpp, evaluated on a register of r² values at
// once: W(z) = f(r²) and ∇W(z) = g(r²) z, as there. Each evaluator returns h = −g (positive for
// the repulsive kernels, so no negation is spent in the loop) and, when asked, the value f; the
// blocked pair loop is written once over them.
// Powers avoid pow() where a cheaper identity exists: r^{-1/2} = (r²)^{-1/4} = 1/√(r² · (1/√r²)).
#include <type_traits>

#include "physics/riesz_kernel.hpp"
#include "solvers/simd_math.hpp"

namespace cpm {

struct SimdPairTerms {
  SimdDouble minus_factor;  // h(r²) = −g(r²), so ∇W(z) = −h z (h > 0 for a repulsive kernel)
  SimdDouble value;         // f(r²) = W(z); left zero unless the energy is asked for
};

// The two factors of the pair Hessian ∇²W(z) = q (h/r²) z zᵀ − h I (solvers/pair_hessian.hpp):
// h and h/r², each evaluator with the fewest divisions and square roots it can.
struct SimdHessianFactors {
  SimdDouble minus_factor;  // h(r²)
  SimdDouble over_r2;       // h(r²) / r²
};

// W = sgn(s) r^{-s} for any s > −2, s ≠ 0: h = |s| (r²)^{−(s/2 + 1)} (SimdPower) and f = h r² / s.
struct SimdRieszPower {
  double s;
  SimdPower power;
  // h/r² = |s| (r²)^{−(s/2 + 2)}: one power instead of a power and a division.
  SimdPower hessian_power;
  explicit SimdRieszPower(double s)
      : s(s), power(-0.5 * s - 1.0, std::abs(s)), hessian_power(-0.5 * s - 2.0, std::abs(s)) {}
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    const SimdDouble h = power(r2);
    return {h, Energy ? SimdDouble(1.0 / s) * h * r2 : SimdDouble(0.0)};
  }
  SimdHessianFactors hessian(const SimdDouble& r2) const {
    const SimdDouble over_r2 = hessian_power(r2);
    return {over_r2 * r2, over_r2};
  }
};

// W = r^{-1/2} (s = 1/2). AVX-512: with y = 1/r, f = 1/√r = 1/√(r² y) and h = f y² / 2, from
// the refined estimates. Elsewhere h = 1 / (2 r² √√r²) and f = 2 h r²: two square roots and one
// division instead of two of each (reciprocal_sqrt below AVX-512).
struct SimdRieszQuarter {
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
#if defined(__AVX512F__)
    const SimdDouble y = reciprocal_sqrt(r2);
    const SimdDouble f = reciprocal_sqrt(r2 * y);
    return {SimdDouble(0.5) * f * (y * y), Energy ? f : SimdDouble(0.0)};
#else
    const SimdDouble h = SimdDouble(0.5) / (r2 * xsimd::sqrt(xsimd::sqrt(r2)));
    return {h, Energy ? SimdDouble(2.0) * h * r2 : SimdDouble(0.0)};
#endif
  }
  // AVX-512: h/r² = h y²; elsewhere h/r² = 1 / (2 r⁴ √√r²) by the one division and h = (h/r²) r².
  SimdHessianFactors hessian(const SimdDouble& r2) const {
#if defined(__AVX512F__)
    const SimdDouble y = reciprocal_sqrt(r2);
    const SimdDouble y2 = y * y;
    const SimdDouble h = SimdDouble(0.5) * reciprocal_sqrt(r2 * y) * y2;
    return {h, h * y2};
#else
    const SimdDouble over_r2 = SimdDouble(0.5) / (r2 * r2 * xsimd::sqrt(xsimd::sqrt(r2)));
    return {over_r2 * r2, over_r2};
#endif
  }
};

// W = 1/r (s = 1, Coulomb in 3D): f = y = 1/r, h = y³.
struct SimdRieszInverse {
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    const SimdDouble y = reciprocal_sqrt(r2);
    return {y * y * y, Energy ? y : SimdDouble(0.0)};
  }
  SimdHessianFactors hessian(const SimdDouble& r2) const {
    const SimdDouble y = reciprocal_sqrt(r2);
    const SimdDouble h = y * y * y;
    return {h, h * y * y};
  }
};

// W = −log r: f = −½ log r², h = 1/r².
struct SimdRieszLog {
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    return {reciprocal(r2), Energy ? SimdDouble(-0.5) * xsimd::log(r2) : SimdDouble(0.0)};
  }
  SimdHessianFactors hessian(const SimdDouble& r2) const {
    const SimdDouble h = reciprocal(r2);
    return {h, h * h};
  }
};

// W = −r: with y = 1/r, f = −r² y and h = y.
struct SimdRieszLinear {
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    const SimdDouble y = reciprocal_sqrt(r2);
    return {y, Energy ? SimdDouble(-1.0) * r2 * y : SimdDouble(0.0)};
  }
};

// W = κ r²/2: h = −κ.
struct SimdQuadraticPair {
  double kappa;
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    return {SimdDouble(-kappa), Energy ? SimdDouble(0.5 * kappa) * r2 : SimdDouble(0.0)};
  }
};

// W = κ r: h = −κ/r, f = κ r² / r.
struct SimdAbsolutePair {
  double kappa;
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    const SimdDouble y = reciprocal_sqrt(r2);
    return {SimdDouble(-kappa) * y, Energy ? SimdDouble(kappa) * r2 * y : SimdDouble(0.0)};
  }
};

// h and h/r² of any evaluator: its own hessian() where it has one, else h by evaluate() and a
// division.
template <class Evaluator>
SimdHessianFactors hessian_factors(const Evaluator& w, const SimdDouble& r2) {
  if constexpr (requires { w.hessian(r2); }) {
    return w.hessian(r2);
  } else {
    const SimdDouble h = w.template evaluate<false>(r2).minus_factor;
    return {h, h / r2};
  }
}

// The mollified kernel evaluates its Riesz member at r² + ε².
template <class Inner>
struct SimdMollified {
  Inner inner;
  double eps2;
  template <bool Energy>
  SimdPairTerms evaluate(const SimdDouble& r2) const {
    return inner.template evaluate<Energy>(r2 + SimdDouble(eps2));
  }
  // h and h / (r² + ε²): the mollified Hessian divides by the inner argument.
  SimdHessianFactors hessian(const SimdDouble& r2) const {
    return hessian_factors(inner, r2 + SimdDouble(eps2));
  }
};

// The SIMD twin of each scalar evaluator of physics/riesz_kernel.hpp: SimdTwin<E>::visit(w, f)
// calls f with the SIMD evaluator of the same W, in its cheapest form for w's parameters. A
// scalar evaluator without a twin here does not compile in visit_simd().
template <class Scalar>
struct SimdTwin;

template <>
struct SimdTwin<RieszPower> {
  template <class F>
  static decltype(auto) visit(const RieszPower& w, F&& f) {
    if (w.s == 0.5) return f(SimdRieszQuarter{});
    if (w.s == 1.0) return f(SimdRieszInverse{});
    return f(SimdRieszPower{w.s});
  }
};

template <>
struct SimdTwin<RieszLog> {
  template <class F>
  static decltype(auto) visit(const RieszLog&, F&& f) {
    return f(SimdRieszLog{});
  }
};

template <>
struct SimdTwin<RieszLinear> {
  template <class F>
  static decltype(auto) visit(const RieszLinear&, F&& f) {
    return f(SimdRieszLinear{});
  }
};

// The twin of the Riesz member (log for s = 0, else the power's twin) at r² + ε².
template <>
struct SimdTwin<RieszMollified> {
  template <class F>
  static decltype(auto) visit(const RieszMollified& w, F&& f) {
    auto mollify = [&](auto inner) { return f(SimdMollified<decltype(inner)>{inner, w.eps2}); };
    if (w.s == 0.0) return mollify(SimdRieszLog{});
    return SimdTwin<RieszPower>::visit(RieszPower{w.s}, mollify);
  }
};

template <>
struct SimdTwin<QuadraticPair> {
  template <class F>
  static decltype(auto) visit(const QuadraticPair& w, F&& f) {
    return f(SimdQuadraticPair{w.kappa});
  }
};

template <>
struct SimdTwin<AbsolutePair> {
  template <class F>
  static decltype(auto) visit(const AbsolutePair& w, F&& f) {
    return f(SimdAbsolutePair{w.kappa});
  }
};

// Calls f(evaluator) with the SIMD evaluator of `k`: the twin of the evaluator visit() hands out.
template <class F>
decltype(auto) visit_simd(const InteractionKernel& k, F&& f) {
  return visit(k, [&](const auto& scalar) -> decltype(auto) {
    return SimdTwin<std::decay_t<decltype(scalar)>>::visit(scalar, f);
  });
}

}  // namespace cpm
