#pragma once
// The positive feature maps of linear attention (docs/model.md §2; the particle kinds of
// physics/feature_maps.hpp, whose per-point value types this batched float/double code is tested
// against), applied to a block of tokens. φ has D_φ rows (feature_dimension); the particle maps
// read one head's particles ω_1..ω_r ∈ R^{d_head}, the rows of Ω (r = particle_rows), while elu
// and dpfp have none. Inputs are scaled first, x ← s·x with s = d_head^{-1/4}, so that φ(q)·φ(k)
// estimates exp(qᵀk/√d_head) for favor.
//   favor        φ_k(x) = exp(ω_kᵀx − |x|²/2 − c) + ε                             D_φ = r
//   softplus     φ_k(x) = softplus(ω_kᵀx)                                         D_φ = r
//   softmaxfeat  φ_k(x) = exp(ω_kᵀx) / Σ_l exp(ω_lᵀx) + ε                         D_φ = r
//   elu          φ_a(x) = elu(x_a) + 1                                            D_φ = d_head
//   dpfp         φ_{2d(i−1)+j}(x) = r_j r_{j−i} + ε,  i = 1..ν                    D_φ = 2ν d_head
//   hedgehog     φ(x) = [softmax(Ωx); softmax(−Ωx)] + ε                           D_φ = 2r
// elu + 1 is Katharopoulos et al. (2020). dpfp is the deterministic parameter-free projection of
// Schlag, Irie & Schmidhuber (2021): r = [relu(x), relu(−x)] ∈ R^{2d}, indices mod 2d, block i is
// r ⊙ roll(r, i) with torch.roll's direction as in the authors' code (the paper's r_{j+i} permutes
// each block, which leaves φ(q)·φ(k) unchanged); φ is homogeneous of degree 2, so the scale s only
// multiplies it by s², which the attention's normalisation removes. hedgehog is Zhang et al.
// (2024) with the particles as its linear layer (no bias): two softmaxes over the r rows, each
// summing to one, as in the authors' feature map (lolcats SoftmaxDim), whose clamp at ε is
// replaced by + ε here.
// The max-shift c of favor (per query, or one for all keys of a sequence) only rescales φ, which
// the attention's normalisation removes; it is computed from the data and treated as a constant
// in the backward pass. ε keeps every φ(q)·Σφ(k) away from zero (dpfp's products vanish wherever
// the signs of x disagree). The backward pass can also accumulate the gradient with respect to
// the particles, for particles trained by back-propagation.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "physics/feature_maps.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {

struct FeatureMapSpec {
  FeatureMapKind kind = FeatureMapKind::favor;
  double epsilon = 1e-6;  // ε inside favor, softmaxfeat, dpfp and hedgehog
  int dpfp_nu = 1;  // ν of dpfp, 1 ≤ ν < 2 d_head (the paper's range; 1, 2, 3 in its runs)
  // τ, a temperature on the map's input: x ← τ s x. For favor, φ(τ s q)ᵀφ(τ s k) estimates
  // exp(τ² s² qᵀk), a Gaussian kernel of bandwidth 1/τ; a study chooses τ on validation data.
  double bandwidth = 1.0;
};

namespace feature_detail {

[[noreturn]] inline void refuse(const FeatureMapSpec& spec, const std::string& why) {
  throw std::invalid_argument(feature_map_name(spec.kind) + " " + why);
}

inline void check_dpfp_nu(const FeatureMapSpec& spec, int head_size) {
  if (spec.dpfp_nu < 1 || spec.dpfp_nu >= 2 * head_size)
    refuse(spec, "needs 1 ≤ ν < 2 d_head = " + std::to_string(2 * head_size) +
                     ", not ν = " + std::to_string(spec.dpfp_nu));
}

// c ← softmax(c), shifted by its maximum (exact: softmax is shift-invariant).
template <class V>
void softmax_in_place(V&& c) {
  c.array() = (c.array() - c.maxCoeff()).exp();
  c /= ordered_sum(c);
}

// The softmax's backward: g ← p ⊙ (g − Σ_l g_l p_l) with p = f − ε, f the forward's softmax + ε.
template <class G, class F, class T>
void softmax_backward_in_place(G&& g, const F& f, T eps) {
  const T inner = ordered_dot(g, f) - eps * ordered_sum(g);  // Σ_l g_l p_l
  g.array() = (f.array() - eps) * (g.array() - inner);
}

}  // namespace feature_detail

// D_φ, the rows of φ, for a head of head_size with `particles` particles (elu and dpfp ignore
// them; particle_rows checks the result). Throws std::invalid_argument for rff and an impossible ν.
inline int feature_dimension(const FeatureMapSpec& spec, int particles, int head_size) {
  switch (spec.kind) {
    case FeatureMapKind::favor:
    case FeatureMapKind::porf_softplus:
    case FeatureMapKind::softmaxfeat:
      return particles;
    case FeatureMapKind::hedgehog:
      return 2 * particles;
    case FeatureMapKind::elu:
      return head_size;
    case FeatureMapKind::dpfp:
      feature_detail::check_dpfp_nu(spec, head_size);
      return 2 * spec.dpfp_nu * head_size;
    case FeatureMapKind::rff:
      break;
  }
  throw std::invalid_argument("rff features can be negative: not usable in linear attention");
}

// The scale τ s of linear attention's feature input, s = d_head^{-1/4}: at τ = 1, φ(s q)ᵀφ(s k)
// estimates exp(qᵀk/√d_head) for favor, the softmax kernel of the same head.
template <class T>
T feature_input_scale(const FeatureMapSpec& spec, int head_size) {
  return static_cast<T>(spec.bandwidth / std::sqrt(std::sqrt(static_cast<double>(head_size))));
}

// The rows of the particle block Ω behind feature_dim = D_φ rows of φ: D_φ for favor,
// porf-softplus and softmaxfeat, D_φ/2 for hedgehog, 0 for elu and dpfp. Throws
// std::invalid_argument when the kind has no D_φ = feature_dim for this head size.
inline int particle_rows(const FeatureMapSpec& spec, int feature_dim, int head_size) {
  auto refuse = [&](const std::string& what) {
    feature_detail::refuse(spec, "has " + what +
                                     " rows of φ for d_head = " + std::to_string(head_size) +
                                     ", not " + std::to_string(feature_dim));
  };
  switch (spec.kind) {
    case FeatureMapKind::favor:
    case FeatureMapKind::porf_softplus:
    case FeatureMapKind::softmaxfeat:
      if (feature_dim < 1) refuse("D_φ = r ≥ 1");
      return feature_dim;
    case FeatureMapKind::hedgehog:
      if (feature_dim < 2 || feature_dim % 2 != 0) refuse("an even number D_φ = 2r ≥ 2 of");
      return feature_dim / 2;
    case FeatureMapKind::elu:
      if (feature_dim != head_size) refuse("D_φ = d_head");
      return 0;
    case FeatureMapKind::dpfp:
      feature_detail::check_dpfp_nu(spec, head_size);
      if (feature_dim != 2 * spec.dpfp_nu * head_size)
        refuse("D_φ = 2ν d_head = " + std::to_string(2 * spec.dpfp_nu * head_size));
      return 0;
    case FeatureMapKind::rff:
      break;
  }
  throw std::invalid_argument("rff features can be negative: not usable in linear attention");
}

// How the favor max-shift is chosen: per column (queries) or one shared over all columns (keys).
enum class FeatureShift { per_column, shared };

// phi (m, n) = φ(s·x) for the n columns of x (d_head, n), m = D_φ; omega is
// (particle_rows(spec, m, d_head), d_head) row-major (unused, and may be null, for elu and dpfp).
template <class T>
void feature_map_forward(const FeatureMapSpec& spec, T* phi, const ConstStridedMap<T>& x,
                         const T* omega, int m, T scale, FeatureShift shift) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  const int rows = particle_rows(spec, m, hs);
  ConstMatrixMap<T> omega_t(omega, hs, rows);  // Ωᵀ (d_head, rows)
  MatrixMap<T> u(phi, m, n);
  if (rows > 0) u.topRows(rows).noalias() = scale * (omega_t.transpose() * x);  // Ω s x (rows, n)
  const T eps = static_cast<T>(spec.epsilon);
  switch (spec.kind) {
    case FeatureMapKind::favor: {
      for (int j = 0; j < n; ++j)
        u.col(j).array() -= T(0.5) * scale * scale * ordered_dot(x.col(j), x.col(j));
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
        feature_detail::softmax_in_place(u.col(j));
        u.col(j).array() += eps;
      }
      break;
    case FeatureMapKind::elu:
      u = scale * x;  // elu(y) + 1 = y + 1 for y > 0, e^y otherwise
      u = u.unaryExpr([](T v) { return v > T(0) ? v + T(1) : std::exp(v); });
      break;
    case FeatureMapKind::dpfp: {
      const int d2 = 2 * hs;
      for (int j = 0; j < n; ++j) {
        auto r = [&](int a) {  // r = [relu(s x), relu(−s x)]
          const T y = scale * x(a % hs, j);
          return std::max(a < hs ? y : -y, T(0));
        };
        for (int i = 1; i <= spec.dpfp_nu; ++i)
          for (int a = 0; a < d2; ++a) u((i - 1) * d2 + a, j) = r(a) * r((a - i + d2) % d2) + eps;
      }
      break;
    }
    case FeatureMapKind::hedgehog:
      u.bottomRows(rows) = -u.topRows(rows);
      for (int j = 0; j < n; ++j) {
        feature_detail::softmax_in_place(u.col(j).head(rows));
        feature_detail::softmax_in_place(u.col(j).tail(rows));
        u.col(j).array() += eps;
      }
      break;
  }
}

// Differentiates the forward above with respect to x, dx (d_head, n) += J_φ(x)ᵀ dphi, and, when
// domega is non-null, with respect to the particles, domega (rows, d_head) row-major += ∂ℓ/∂Ω.
// dphi (m, n) is overwritten: the particle maps turn its top rows into the gradient G of the
// pre-activations u = s Ωx, and then dx += s Ωᵀ G, dΩ += s G xᵀ.
//   favor:       ∂φ_k/∂u_k = φ_k − ε  ⇒  G = dphi ⊙ (φ − ε), and −s²|x|²/2 adds dx −= s² x Σ_k G_k
//   softplus:    ∂φ_k/∂u_k = σ(u_k) = 1 − e^{−φ_k}  ⇒  G = dphi ⊙ σ
//   softmaxfeat: p = φ − ε  ⇒  G = p ⊙ (dphi − Σ_l dphi_l p_l)
//   hedgehog:    p, p̄ = the halves of φ − ε  ⇒  G = p ⊙ (dphi⁺ − dphi⁺·p) − p̄ ⊙ (dphi⁻ − dphi⁻·p̄)
// elu and dpfp act on y = s x directly:
//   elu:   ∂φ_a/∂x_a = s min(φ_a, 1)  (s for y_a > 0, s e^{y_a} = s φ_a otherwise)
//   dpfp:  φ_{ia} = r_a r_{a−i}  ⇒  dr_a += dphi_{ia} r_{a−i},  dr_{a−i} += dphi_{ia} r_a,
//          dx_b += s (dr_b [y_b > 0] − dr_{d+b} [y_b < 0])
template <class T>
void feature_map_backward(const FeatureMapSpec& spec, StridedMap<T>& dx, T* dphi, const T* phi,
                          const ConstStridedMap<T>& x, const T* omega, int m, T scale,
                          T* domega = nullptr) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  const int rows = particle_rows(spec, m, hs);
  ConstMatrixMap<T> omega_t(omega, hs, rows);
  MatrixMap<T> g(dphi, m, n);
  ConstMatrixMap<T> f(phi, m, n);
  const T eps = static_cast<T>(spec.epsilon);
  switch (spec.kind) {
    case FeatureMapKind::favor:
      g.array() *= f.array() - eps;
      for (int j = 0; j < n; ++j) dx.col(j) -= (scale * scale * ordered_sum(g.col(j))) * x.col(j);
      break;
    case FeatureMapKind::porf_softplus:
      g.array() *= -(-f.array()).expm1();
      break;
    case FeatureMapKind::rff:
      throw std::invalid_argument("rff features can be negative: not usable in linear attention");
    case FeatureMapKind::softmaxfeat:
      for (int j = 0; j < n; ++j)
        feature_detail::softmax_backward_in_place(g.col(j), f.col(j), eps);
      break;
    case FeatureMapKind::elu:
      dx.array() += scale * g.array() * f.array().min(T(1));
      break;
    case FeatureMapKind::dpfp: {
      const int d2 = 2 * hs;
      for (int j = 0; j < n; ++j) {
        auto r = [&](int a) {
          const T y = scale * x(a % hs, j);
          return std::max(a < hs ? y : -y, T(0));
        };
        auto add = [&](int a, T dr) {  // dx += s dr ∂r_a/∂y
          if (r(a) > T(0)) dx(a % hs, j) += a < hs ? scale * dr : -scale * dr;
        };
        for (int i = 1; i <= spec.dpfp_nu; ++i)
          for (int a = 0; a < d2; ++a) {
            const int partner = (a - i + d2) % d2;
            const T gi = g((i - 1) * d2 + a, j);
            add(a, gi * r(partner));
            add(partner, gi * r(a));
          }
      }
      break;
    }
    case FeatureMapKind::hedgehog:
      for (int j = 0; j < n; ++j) {
        auto plus = g.col(j).head(rows);
        auto minus = g.col(j).tail(rows);
        feature_detail::softmax_backward_in_place(plus, f.col(j).head(rows), eps);
        feature_detail::softmax_backward_in_place(minus, f.col(j).tail(rows), eps);
        plus -= minus;  // u enters the second softmax as −u
      }
      break;
  }
  if (rows == 0) return;
  const auto gu = g.topRows(rows);
  dx.noalias() += scale * (omega_t * gu);  // (d_head, rows)(rows, n)
  if (domega) {
    MatrixMap<T> domega_t(domega, hs, rows);  // (∂ℓ/∂Ω)ᵀ
    domega_t.noalias() += scale * (x * gu.transpose());
  }
}

}  // namespace cpm
