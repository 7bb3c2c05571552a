#pragma once
// Pair interactions W(z) as small evaluator types (the HOOMD-blue pattern): parameters in,
// value and gradient out, no loops. Each is a radial function written through r² = |z|²,
//     W(z) = f(r²),   ∇W(z) = g(r²) z   with g = 2 f'(r²),
// so pair loops need no square root unless the kernel itself does. Each also gives its radial
// moment, the integral the cell-integrated kernel weights are built from
// (solvers/cell_integrated_kernel.hpp):
//     G_d(ρ) = ∫_0^ρ W(r e) r^{d−1} dr   (e any unit vector; for d = 1 the antiderivative of W
//                                          on [0, ρ]),
// defined in riesz_kernel.cpp: out of line, so that its rounding does not depend on the caller
// (inlined, the compiler may fuse its last product with the caller's sum).
#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cpm {

// W(z) = sgn(s) |z|^{-s} for −2 < s < d, s ≠ 0: the singular Riesz kernels for s > 0, and for
// −2 < s < 0 the conditionally positive definite −|z|^{|s|} (s = −1: the energy distance's kernel
// in any d). In both cases h = −g = |s| (r²)^{−s/2−1} > 0 (repulsion) and f = h r² / s.
struct RieszPower {
  double s;
  double value_r2(double r2) const {
    return s > 0.0 ? std::pow(r2, -0.5 * s) : -std::pow(r2, -0.5 * s);
  }
  double gradient_factor(double r2) const { return -std::abs(s) * std::pow(r2, -0.5 * s - 1.0); }
  // sgn(s) ρ^{d−s} / (d − s); |z|^{−s} is locally integrable for s < d only.
  double radial_moment(int d, double rho) const;
};

// W(z) = −log|z| (the s → 0 member of the Riesz family; Coulomb in d = 2).
struct RieszLog {
  double value_r2(double r2) const { return -0.5 * std::log(r2); }
  double gradient_factor(double r2) const { return -1.0 / r2; }
  // ρ^d (1/d − log ρ) / d.
  double radial_moment(int d, double rho) const;
};

// W(z) = −|z| (the s = −1 member; Coulomb in d = 1).
struct RieszLinear {
  double value_r2(double r2) const { return -std::sqrt(r2); }
  double gradient_factor(double r2) const { return -1.0 / std::sqrt(r2); }
  // −ρ^{d+1} / (d + 1).
  double radial_moment(int d, double rho) const;
};

// Mollified Riesz: W(z) = (|z|² + ε²)^{-s/2} for s > 0, −½ log(|z|² + ε²) for s = 0.
struct RieszMollified {
  double s, eps2;
  double value_r2(double r2) const {
    return s == 0.0 ? -0.5 * std::log(r2 + eps2) : std::pow(r2 + eps2, -0.5 * s);
  }
  double gradient_factor(double r2) const {
    return s == 0.0 ? -1.0 / (r2 + eps2) : -s * std::pow(r2 + eps2, -0.5 * s - 1.0);
  }
  // No closed form: adaptive quadrature.
  double radial_moment(int d, double rho) const;
};

// W(z) = κ|z|²/2 (attraction for κ > 0; the exactly solvable Gaussian case).
struct QuadraticPair {
  double kappa;
  double value_r2(double r2) const { return 0.5 * kappa * r2; }
  double gradient_factor(double) const { return kappa; }
  // κ ρ^{d+2} / (2(d + 2)).
  double radial_moment(int d, double rho) const;
};

// W(z) = κ|z| (1D attraction with the sech² stationary law).
struct AbsolutePair {
  double kappa;
  double value_r2(double r2) const { return kappa * std::sqrt(r2); }
  double gradient_factor(double r2) const { return kappa / std::sqrt(r2); }
  // κ ρ^{d+1} / (d + 1).
  double radial_moment(int d, double rho) const;
};

// A run-time description of W; `visit` hands the matching evaluator to generic code. The kind
// says which W it is; `s` is read by `power` and `mollified` only, `epsilon` by `mollified`,
// `kappa` by `quadratic` and `absolute`.
struct InteractionKernel {
  enum class Kind { power, log, linear, mollified, quadratic, absolute, none };
  // The number of kinds (`none` stays last); the tests visit every one.
  static constexpr int kind_count = static_cast<int>(Kind::none) + 1;

  Kind kind = Kind::power;
  double s = 1.0;        // exponent: |z|^{-s} (power), (|z|² + ε²)^{-s/2} (mollified)
  double epsilon = 0.0;  // mollification length (mollified only)
  double kappa = 1.0;    // strength (quadratic, absolute)

  // sgn(s)|z|^{-s}, −2 < s < d, s ≠ 0.
  static InteractionKernel power(double s) { return {Kind::power, s, 0.0, 1.0}; }
  // −log|z|.
  static InteractionKernel log() { return {Kind::log, 0.0, 0.0, 1.0}; }
  // −|z| (d = 1).
  static InteractionKernel linear() { return {Kind::linear, 0.0, 0.0, 1.0}; }
  static InteractionKernel mollified(double s, double eps) {
    return {Kind::mollified, s, eps, 1.0};
  }
  static InteractionKernel quadratic(double kappa) { return {Kind::quadratic, 0.0, 0.0, kappa}; }
  static InteractionKernel absolute(double kappa) { return {Kind::absolute, 0.0, 0.0, kappa}; }
  static InteractionKernel none() { return {Kind::none, 0.0, 0.0, 0.0}; }

  // True when W is unbounded at z = 0 (particles must stay apart).
  bool singular() const { return (kind == Kind::power && s > 0.0) || kind == Kind::log; }
  std::string describe() const;
};

// Calls f(evaluator) with the concrete evaluator of `k`; `none` visits QuadraticPair{0}.
template <class F>
decltype(auto) visit(const InteractionKernel& k, F&& f) {
  using K = InteractionKernel::Kind;
  switch (k.kind) {
    case K::power:
      if (!(k.s > -2.0 && k.s != 0.0))
        throw std::invalid_argument(
            "the power kernel sgn(s)|z|^-s needs -2 < s, s != 0 (use the log kernel for s = 0)");
      return f(RieszPower{k.s});
    case K::log:
      return f(RieszLog{});
    case K::linear:
      return f(RieszLinear{});
    case K::mollified:
      return f(RieszMollified{k.s, k.epsilon * k.epsilon});
    case K::quadratic:
      return f(QuadraticPair{k.kappa});
    case K::absolute:
      return f(AbsolutePair{k.kappa});
    case K::none:
      return f(QuadraticPair{0.0});
  }
  throw std::invalid_argument("unknown interaction kernel");
}

// Value and gradient at a displacement z, for tests and for code outside the pair loops.
template <class Evaluator>
double kernel_value(const Evaluator& w, const Eigen::Ref<const Eigen::VectorXd>& z) {
  return w.value_r2(z.squaredNorm());
}
template <class Evaluator>
Eigen::VectorXd kernel_gradient(const Evaluator& w, const Eigen::Ref<const Eigen::VectorXd>& z) {
  return w.gradient_factor(z.squaredNorm()) * z;
}

}  // namespace cpm
