#pragma once
// The positive feature maps of linear attention (docs/model.md §2; the kinds of
// physics/feature_maps.hpp, whose per-point value types this batched float/double code is tested
// against), applied to a block of tokens with one head's m particles ω_1..ω_m ∈ R^{d_head}. Inputs
// are scaled first, x ← s·x with s = d_head^{-1/4}, so that φ(q)·φ(k) estimates exp(qᵀk/√d_head)
// for favor.
//   favor        φ_k(x) = exp(ω_kᵀx − |x|²/2 − c) + ε
//   softplus     φ_k(x) = softplus(ω_kᵀx)
//   softmaxfeat  φ_k(x) = exp(ω_kᵀx) / Σ_l exp(ω_lᵀx) + ε
// The max-shift c of favor (per query, or one for all keys of a sequence) only rescales φ, which
// the attention's normalisation removes; it is computed from the data and treated as a constant
// in the backward pass. ε keeps every φ(q)·Σφ(k) away from zero. The gradient with respect to the
// particles is not needed here: particles are frozen while the network trains.
#include <cmath>
#include <stdexcept>
#include <string>

#include "physics/feature_maps.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {

struct FeatureMapSpec {
  FeatureMapKind kind = FeatureMapKind::favor;
  double epsilon = 1e-6;  // ε inside favor and softmaxfeat
};

// How the favor max-shift is chosen: per column (queries) or one shared over all columns (keys).
enum class FeatureShift { per_column, shared };

// phi (m, n) = φ(s·x) for the n columns of x (d_head, n); omega is (m, d_head) row-major.
template <class T>
void feature_map_forward(const FeatureMapSpec& spec, T* phi, const ConstStridedMap<T>& x,
                         const T* omega, int m, T scale, FeatureShift shift) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  ConstMatrixMap<T> omega_t(omega, hs, m);  // Ωᵀ (d_head, m)
  MatrixMap<T> u(phi, m, n);
  u.noalias() = scale * (omega_t.transpose() * x);  // u = Ω s x  (m, n)
  const T eps = static_cast<T>(spec.epsilon);
  switch (spec.kind) {
    case FeatureMapKind::favor: {
      for (int j = 0; j < n; ++j)
        u.col(j).array() -= T(0.5) * scale * scale * x.col(j).squaredNorm();
      if (shift == FeatureShift::shared) {
        const T c = n > 0 ? u.maxCoeff() : T(0);
        u.array() = (u.array() - c).exp() + eps;
      } else {
        for (int j = 0; j < n; ++j) {
          const T c = u.col(j).maxCoeff();
          u.col(j).array() = (u.col(j).array() - c).exp() + eps;
        }
      }
      break;
    }
    case FeatureMapKind::porf_softplus:
      // softplus(u) = max(u, 0) + log1p(exp(−|u|)), stable for large |u|.
      u.array() = u.array().max(T(0)) + (-u.array().abs()).exp().log1p();
      break;
    case FeatureMapKind::rff:
      throw std::invalid_argument("rff features can be negative: not usable in linear attention");
    case FeatureMapKind::softmaxfeat:
      for (int j = 0; j < n; ++j) {
        const T c = u.col(j).maxCoeff();  // exact: softmax is shift-invariant
        u.col(j).array() = (u.col(j).array() - c).exp();
        u.col(j) /= u.col(j).sum();
        u.col(j).array() += eps;
      }
      break;
  }
}

// Differentiates the forward above with respect to x: dx (d_head, n) += J_φ(x)ᵀ dphi.
// dphi (m, n) is overwritten (it becomes the pre-activation gradient G).
//   favor:       ∂φ_k/∂x = (φ_k − ε)(s ω_k − s² x)  ⇒ dx += s Ωᵀ G − s² x Σ_k G_k,  G = dphi ⊙ (φ −
//   ε) softplus:    ∂φ_k/∂x = σ(s ω_kᵀx) s ω_k, σ(u) = 1 − e^{−softplus(u)}  ⇒ dx += s Ωᵀ (dphi ⊙
//   σ) softmaxfeat: p = φ − ε, G = p ⊙ (dphi − Σ_l dphi_l p_l)  ⇒ dx += s Ωᵀ G
template <class T>
void feature_map_backward(const FeatureMapSpec& spec, StridedMap<T>& dx, T* dphi, const T* phi,
                          const ConstStridedMap<T>& x, const T* omega, int m, T scale) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  ConstMatrixMap<T> omega_t(omega, hs, m);
  MatrixMap<T> g(dphi, m, n);
  ConstMatrixMap<T> f(phi, m, n);
  const T eps = static_cast<T>(spec.epsilon);
  switch (spec.kind) {
    case FeatureMapKind::favor:
      g.array() *= f.array() - eps;
      for (int j = 0; j < n; ++j) dx.col(j) -= (scale * scale * g.col(j).sum()) * x.col(j);
      break;
    case FeatureMapKind::porf_softplus:
      g.array() *= -(-f.array()).expm1();
      break;
    case FeatureMapKind::rff:
      throw std::invalid_argument("rff features can be negative: not usable in linear attention");
    case FeatureMapKind::softmaxfeat:
      for (int j = 0; j < n; ++j) {
        const T inner = g.col(j).dot(f.col(j)) - eps * g.col(j).sum();  // Σ_l dphi_l p_l
        g.col(j).array() = (f.col(j).array() - eps) * (g.col(j).array() - inner);
      }
      break;
  }
  dx.noalias() += scale * (omega_t * g);  // (d_head, m)(m, n)
}

}  // namespace cpm
