#pragma once
// The feature maps of linear attention (docs/model.md §2; the particle kinds of
// physics/random_feature_maps.hpp, whose per-point value types this batched float/double code is
// tested against), applied to a block of tokens. φ has D_φ rows (feature_dimension); the particle
// maps read one head's particles ω_1..ω_r ∈ R^{d_head}, the rows of Ω (r = particle_rows), the
// projected maps their projection P in the same place, while elu and dpfp have none. Inputs are
// scaled first, x ← s·x with s = d_head^{-1/4}, so that φ(q)·φ(k) estimates exp(qᵀk/√d_head) for
// favor.
//   favor        φ_k(x) = exp(ω_kᵀx − |x|²/2 − c) + ε                             D_φ = r
//   softplus     φ_k(x) = softplus(ω_kᵀx)                                         D_φ = r
//   softmaxfeat  φ_k(x) = exp(ω_kᵀx) / Σ_l exp(ω_lᵀx) + ε                         D_φ = r
//   elu          φ_a(x) = elu(x_a) + 1                                            D_φ = d_head
//   dpfp         φ_{2d(i−1)+j}(x) = r_j r_{j−i} + ε,  i = 1..ν                    D_φ = 2ν d_head
//   hedgehog     φ(x) = [softmax(Ωx); softmax(−Ωx)] + ε                           D_φ = 2r
//   taylor       φ(x) = [1; u; (c_ij u_i u_j)_{i≤j}],  u = P x      D_φ = 1 + d′ + d′(d′+1)/2
//   rebased      φ(x) = [√ε; (c_ij y_i y_j)_{i≤j}],  y = γ ⊙ LN(P x) + β      D_φ = 1 + d′(d′+1)/2
//   projected dpfp   dpfp of ν on u = P x                                      D_φ = 2ν d′
// elu + 1 is Katharopoulos et al. (2020). dpfp is the deterministic parameter-free projection of
// Schlag, Irie & Schmidhuber (2021): r = [relu(x), relu(−x)] ∈ R^{2d}, indices mod 2d, block i is
// r ⊙ roll(r, i) with torch.roll's direction as in the authors' code (the paper's r_{j+i} permutes
// each block, which leaves φ(q)·φ(k) unchanged); φ is homogeneous of degree 2, so the scale s only
// multiplies it by s², which the attention's normalisation removes. hedgehog is Zhang et al.
// (2024) with the particles as its linear layer (no bias): two softmaxes over the r rows, each
// summing to one, as in the authors' feature map (lolcats SoftmaxDim), whose clamp at ε is
// replaced by + ε here.
// The projected maps read a learned linear projection P (d′ rows, d_head columns) as their
// particle block and act on u = s·P x ∈ R^{d′}, as Based (Arora et al. 2024) projects q and k to
// its feature dimension d′ before its Taylor map; D_φ is then chosen through d′.
//   taylor is Based's second-order Taylor map of exp with the upper triangle of u uᵀ in place of
//   the full d′² outer product: c_ii = 1/√2, c_ij = 1 (i < j), row 0 is the constant 1, rows
//   1..d′ hold u and the rows from 1 + d′ on the products (i, j), i ≤ j, i outer. Then
//   φ(x)ᵀφ(x′) = 1 + uᵀu′ + (uᵀu′)²/2 exactly, Based's kernel with d′(d′−1)/2 fewer features
//   (Based also divides u by d′^{1/4}: here the head's scale s and the learned P take its place).
//   φ is not positive (u_i u_j < 0 happens) but its kernel is, 1 + z + z²/2 ≥ 1/2 for every z,
//   so every φ(q)·φ(k), and the attention's denominator, stays positive: no ε is added.
//   rebased is a ReBased-style map (Aksenov et al. 2024): LayerNorm of u over its d′ entries,
//   ŷ = (u − mean u)/√(var u + ε_LN) (ε_LN = kRebasedLayerNormEpsilon, as PyTorch's), with a
//   learned affine y = γ ⊙ ŷ + β (γ = 1, β = 0 at the start, one pair shared by queries and keys,
//   as the authors' feature map is one module applied to both), then the quadratic map: rows 1..
//   hold y_i y_j with c_ii = 1 and c_ij = √2 (i < j), in taylor's order, so that φ(x)ᵀφ(x′) = ε +
//   (yᵀy′)² exactly (the full x ⊗ x with its d′(d′−1)/2 repeats dropped); row 0 holds √ε, which
//   keeps every φ(q)·Σφ(k) positive. The LayerNorm removes the scale of u, so s (and τ) matter only
//   through ε_LN. Its particle block is P (d′ rows), then γ and then β, each in the first d′
//   entries of ⌈d′/d_head⌉ rows (the rest zero): d′ + 2⌈d′/d_head⌉ rows. dpfp with spec.projected
//   is dpfp of ν on u in place of s·x: D_φ = 2ν d′, 1 ≤ ν < 2 d′; with P = I (d′ = d_head) it is
//   the native dpfp. It needs d′ ≤ kMaxDpfpProjection (a per-column buffer on the stack; the maps
//   allocate nothing, as they run inside training steps and OpenMP regions).
// The max-shift c of favor (per query, or one for all keys of a sequence) only rescales φ, which
// the attention's normalisation removes; it is computed from the data and treated as a constant
// in the backward pass. ε keeps every φ(q)·Σφ(k) away from zero (dpfp's products vanish wherever
// the signs of x disagree). The backward pass can also accumulate the gradient with respect to
// the particles, for particles (and projections) trained by back-propagation.
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "physics/random_feature_maps.hpp"
#include "transformer/key_normalisation.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/register_reductions.hpp"
#include "transformer/shifted_exponential.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {

struct FeatureMapSpec {
  FeatureMapKind kind = FeatureMapKind::favor;
  double epsilon = 1e-6;  // ε inside favor, softmaxfeat, dpfp and hedgehog
  int dpfp_nu = 1;        // ν of dpfp, 1 ≤ ν < 2 d (the paper's range; 1, 2, 3 in its runs)
  // dpfp on u = s·P x, P the particle block (d′, d_head), in place of s·x (d = d′ above). taylor
  // is always projected; the other kinds refuse projected = true.
  bool projected = false;
  // τ, a temperature on the map's input: x ← τ s x. For favor, φ(τ s q)ᵀφ(τ s k) estimates
  // exp(τ² s² qᵀk), a Gaussian kernel of bandwidth 1/τ; a study chooses τ on validation data.
  double bandwidth = 1.0;
  // The keys' features divided by their length, φ(k)/‖φ(k)‖ (transformer/key_normalisation.hpp):
  // applied by the attention to the keys only.
  KeyNormalisation key_normalisation = KeyNormalisation::none;
  // QK normalisation (transformer/key_normalisation.hpp), applied by the model that holds the
  // learned scales: φ reads s_h q/‖q‖ and s_h k/‖k‖, s_h one scale per head started at τ =
  // bandwidth, and applies no scale of its own (feature_input_scale is 1), so that τ enters once,
  // as the starting value of s_h.
  bool qk_normalisation = false;
};

// The largest projection d′ of the projected dpfp: its forward and backward keep a column of u on
// the stack.
inline constexpr int kMaxDpfpProjection = 256;
// The same for rebased, whose forward and backward keep u and y on the stack.
inline constexpr int kMaxRebasedProjection = 256;
// rebased's LayerNorm: ŷ = (u − mean u)/√(var u + ε_LN).
inline constexpr double kRebasedLayerNormEpsilon = 1e-5;

// True for the maps that act on u = s·P x: taylor, rebased, and dpfp with spec.projected.
inline bool is_projected(const FeatureMapSpec& spec) {
  return spec.kind == FeatureMapKind::taylor || spec.kind == FeatureMapKind::rebased ||
         (spec.kind == FeatureMapKind::dpfp && spec.projected);
}

// D_φ = 1 + d′(d′+1)/2 of the rebased map with projection size d′ ≥ 0.
inline long long rebased_feature_dimension(int projection) {
  const long long d = projection;
  return 1 + d * (d + 1) / 2;
}

// The largest d′ with 1 + d′(d′+1)/2 ≤ feature_dim (0 when feature_dim < 2).
inline int rebased_projection_size(int feature_dim) {
  int d = 0;
  while (rebased_feature_dimension(d + 1) <= feature_dim) ++d;
  return d;
}

// The rows of rebased's γ (and of its β): ⌈d′/d_head⌉, each row of d_head entries.
inline int rebased_affine_rows(int projection, int head_size) {
  return (projection + head_size - 1) / head_size;
}

// The rows of rebased's particle block for a projection of d′: d′ + 2⌈d′/d_head⌉.
inline int rebased_block_rows(int projection, int head_size) {
  return projection + 2 * rebased_affine_rows(projection, head_size);
}

// D_φ = 1 + d′ + d′(d′+1)/2 of the taylor map with projection size d′ ≥ 0 (as a long long: no
// overflow for any int d′).
inline long long taylor_feature_dimension(int projection) {
  const long long d = projection;
  return 1 + d + d * (d + 1) / 2;
}

// The largest d′ with 1 + d′ + d′(d′+1)/2 ≤ feature_dim, so that a study can match a D_φ budget
// from below (the taylor map then has taylor_feature_dimension(d′) ≤ feature_dim rows); 0 when
// no d′ ≥ 1 fits (feature_dim < 3).
inline int taylor_projection_size(int feature_dim) {
  int d = 0;
  while (taylor_feature_dimension(d + 1) <= feature_dim) ++d;
  return d;
}

namespace feature_detail {

[[noreturn]] inline void refuse(const FeatureMapSpec& spec, const std::string& why) {
  const bool projected_dpfp = spec.kind == FeatureMapKind::dpfp && spec.projected;
  throw std::invalid_argument(feature_map_name(spec.kind) +
                              (projected_dpfp ? " (projected) " : " ") + why);
}

// ν of dpfp against d = d_head, or d = d′ for the projected dpfp.
inline void check_dpfp_nu(const FeatureMapSpec& spec, int d) {
  const std::string what = spec.projected ? "d′" : "d_head";
  if (spec.dpfp_nu < 1 || spec.dpfp_nu >= 2 * d)
    refuse(spec, "needs 1 ≤ ν < 2 " + what + " = " + std::to_string(2 * d) +
                     ", not ν = " + std::to_string(spec.dpfp_nu));
}

// Refuses projected = true for the kinds without a projected form.
inline void check_projected(const FeatureMapSpec& spec) {
  if (spec.projected && spec.kind != FeatureMapKind::dpfp && spec.kind != FeatureMapKind::taylor &&
      spec.kind != FeatureMapKind::rebased)
    refuse(spec, "has no projected form (projected is for dpfp; taylor and rebased always are)");
}

// The projection size d′ of the projected dpfp: 1 ≤ d′ ≤ kMaxDpfpProjection.
inline void check_dpfp_projection(const FeatureMapSpec& spec, int projection) {
  if (projection < 1 || projection > kMaxDpfpProjection)
    refuse(spec, "needs a projection of 1 ≤ d′ ≤ " + std::to_string(kMaxDpfpProjection) +
                     " rows, not d′ = " + std::to_string(projection));
}

// dpfp's column φ (2νd entries, contiguous) from y, the scaled input (d entries, read as y(b)):
// φ_{2d(i−1)+a} = r_a r_{a−i} + ε with r = [relu(y), relu(−y)], indices mod 2d.
template <class T, class Y>
void dpfp_column(const Y& y, int d, int nu, T eps, T* phi) {
  const int d2 = 2 * d;
  auto r = [&](int a) {
    const T v = y(a % d);
    return std::max(a < d ? v : -v, T(0));
  };
  for (int i = 1; i <= nu; ++i)
    for (int a = 0; a < d2; ++a) phi[(i - 1) * d2 + a] = r(a) * r((a - i + d2) % d2) + eps;
}

// Its backward for one column g = dphi (2νd entries): add(b, dy_b) receives the gradient with
// respect to y_b term by term, dr_a = g_{ia} r_{a−i} and dr_{a−i} = g_{ia} r_a passed on as
// dy_b = ±dr_a where r_a = relu(±y_b) > 0.
template <class T, class Y, class Add>
void dpfp_column_backward(const Y& y, int d, int nu, const T* g, const Add& add) {
  const int d2 = 2 * d;
  auto r = [&](int a) {
    const T v = y(a % d);
    return std::max(a < d ? v : -v, T(0));
  };
  auto push = [&](int a, T dr) {  // dy_b += dr ∂r_a/∂y_b
    if (r(a) > T(0)) add(a % d, a < d ? dr : -dr);
  };
  for (int i = 1; i <= nu; ++i)
    for (int a = 0; a < d2; ++a) {
      const int partner = (a - i + d2) % d2;
      const T gi = g[(i - 1) * d2 + a];
      push(a, gi * r(partner));
      push(partner, gi * r(a));
    }
}

// favor's backward for one column: G = g ⊙ (f − ε) (the gradient of the pre-activations), stored
// as s G for the product with Ω that follows; returns Σ_k G_k.
template <class T>
T favor_gradient_column(T* g, const T* f, int m, T eps, T scale) {
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  const Batch e(eps), s(scale);
  Batch sum(T(0));
  int k = 0;
  for (; k + width <= m; k += width) {
    const Batch gk = Batch::load_unaligned(g + k) * (Batch::load_unaligned(f + k) - e);
    (gk * s).store_unaligned(g + k);
    sum += gk;
  }
  T total = xsimd::hadd(sum);
  for (; k < m; ++k) {
    const T gk = g[k] * (f[k] - eps);
    g[k] = gk * scale;
    total += gk;
  }
  return total;
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

// D_φ, the rows of φ, for a head of head_size with `particles` particles, or for the projected
// maps a projection of d′ = particles rows, or for rebased a block of `particles` rows
// (d′ + 2⌈d′/d_head⌉: the projection, γ and β) (elu and the native dpfp ignore them; particle_rows
// checks the result). Throws std::invalid_argument for rff, an impossible ν, a projection
// d′ < 1 (or above kMaxDpfpProjection for dpfp), and projected = true on a kind without it.
inline int feature_dimension(const FeatureMapSpec& spec, int particles, int head_size) {
  feature_detail::check_projected(spec);
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
      if (spec.projected) {
        feature_detail::check_dpfp_projection(spec, particles);
        feature_detail::check_dpfp_nu(spec, particles);
        return 2 * spec.dpfp_nu * particles;
      }
      feature_detail::check_dpfp_nu(spec, head_size);
      return 2 * spec.dpfp_nu * head_size;
    case FeatureMapKind::taylor: {
      const long long dim = taylor_feature_dimension(particles);
      if (particles < 1 || dim > INT_MAX)
        feature_detail::refuse(spec,
                               "needs a projection of d′ ≥ 1 rows with D_φ = 1 + d′ + "
                               "d′(d′+1)/2 an int, not d′ = " +
                                   std::to_string(particles));
      return static_cast<int>(dim);
    }
    case FeatureMapKind::rebased:
      for (int d = 1; rebased_block_rows(d, head_size) <= particles; ++d)
        if (rebased_block_rows(d, head_size) == particles && d <= kMaxRebasedProjection)
          return static_cast<int>(rebased_feature_dimension(d));
      feature_detail::refuse(spec,
                             "needs a block of d′ + 2⌈d′/d_head⌉ rows (the projection, γ and β) "
                             "with 1 ≤ d′ ≤ " +
                                 std::to_string(kMaxRebasedProjection) + ", not " +
                                 std::to_string(particles) + " rows");
    case FeatureMapKind::rff:
      break;
  }
  throw std::invalid_argument("rff features can be negative: not usable in linear attention");
}

// The scale τ s of linear attention's feature input, s = d_head^{-1/4}: at τ = 1, φ(s q)ᵀφ(s k)
// estimates exp(qᵀk/√d_head) for favor, the softmax kernel of the same head. 1 with QK
// normalisation, whose inputs s_h q/‖q‖ carry their learned scale.
template <class T>
T feature_input_scale(const FeatureMapSpec& spec, int head_size) {
  if (spec.qk_normalisation) return T(1);  // φ reads s_h q/‖q‖: the learned s_h is the scale
  return static_cast<T>(spec.bandwidth / std::sqrt(std::sqrt(static_cast<double>(head_size))));
}

// The rows of the particle block Ω behind feature_dim = D_φ rows of φ: D_φ for favor,
// porf-softplus and softmaxfeat, D_φ/2 for hedgehog, 0 for elu and dpfp; for the projected maps
// the rows d′ of P: D_φ/(2ν) for the projected dpfp, and for taylor the d′ with
// D_φ = 1 + d′ + d′(d′+1)/2; for rebased d′ + 2⌈d′/d_head⌉ (P, γ, β) with D_φ = 1 + d′(d′+1)/2.
// Throws std::invalid_argument when the kind has no D_φ = feature_dim for this head size (for
// taylor the message names the nearest attainable D_φ).
inline int particle_rows(const FeatureMapSpec& spec, int feature_dim, int head_size) {
  feature_detail::check_projected(spec);
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
    case FeatureMapKind::dpfp: {
      if (!spec.projected) {
        feature_detail::check_dpfp_nu(spec, head_size);
        if (feature_dim != 2 * spec.dpfp_nu * head_size)
          refuse("D_φ = 2ν d_head = " + std::to_string(2 * spec.dpfp_nu * head_size));
        return 0;
      }
      const int nu = spec.dpfp_nu;
      if (nu < 1) feature_detail::refuse(spec, "needs ν ≥ 1, not ν = " + std::to_string(nu));
      if (feature_dim < 2 * nu || feature_dim % (2 * nu) != 0)
        feature_detail::refuse(spec,
                               "has D_φ = 2ν d′, a multiple of 2ν = " + std::to_string(2 * nu) +
                                   ", rows of φ, not " + std::to_string(feature_dim));
      const int projection = feature_dim / (2 * nu);
      feature_detail::check_dpfp_projection(spec, projection);
      feature_detail::check_dpfp_nu(spec, projection);
      return projection;
    }
    case FeatureMapKind::taylor: {
      const int d = taylor_projection_size(feature_dim);
      if (d >= 1 && taylor_feature_dimension(d) == feature_dim) return d;
      std::string nearest;
      if (d >= 1)
        nearest =
            std::to_string(taylor_feature_dimension(d)) + " for d′ = " + std::to_string(d) + " or ";
      nearest +=
          std::to_string(taylor_feature_dimension(d + 1)) + " for d′ = " + std::to_string(d + 1);
      feature_detail::refuse(spec, "has D_φ = 1 + d′ + d′(d′+1)/2 rows of φ (the nearest: " +
                                       nearest + "), not " + std::to_string(feature_dim));
    }
    case FeatureMapKind::rebased: {
      const int d = rebased_projection_size(feature_dim);
      if (d > kMaxRebasedProjection)
        feature_detail::refuse(spec, "needs a projection of d′ ≤ " +
                                         std::to_string(kMaxRebasedProjection) + " rows, not " +
                                         std::to_string(d));
      if (d >= 1 && rebased_feature_dimension(d) == feature_dim)
        return rebased_block_rows(d, head_size);
      std::string nearest;
      if (d >= 1)
        nearest = std::to_string(rebased_feature_dimension(d)) + " for d′ = " + std::to_string(d) +
                  " or ";
      nearest +=
          std::to_string(rebased_feature_dimension(d + 1)) + " for d′ = " + std::to_string(d + 1);
      feature_detail::refuse(spec, "has D_φ = 1 + d′(d′+1)/2 rows of φ (the nearest: " + nearest +
                                       "), not " + std::to_string(feature_dim));
    }
    case FeatureMapKind::rff:
      break;
  }
  throw std::invalid_argument("rff features can be negative: not usable in linear attention");
}

// How the favor max-shift is chosen: per column (queries) or one shared over all columns (keys).
enum class FeatureShift { per_column, shared };

// The first row of φ that holds u = s Ωx: 1 for taylor and rebased (below their constant row), 0
// otherwise.
inline int projection_row(const FeatureMapSpec& spec) {
  return spec.kind == FeatureMapKind::taylor || spec.kind == FeatureMapKind::rebased ? 1 : 0;
}

// The rows of the block Ω that project x (u = s Ωx) for m = D_φ rows of φ and a block of `rows`:
// d′ for rebased (its γ and β rows follow), the whole block otherwise.
inline int projection_rows(const FeatureMapSpec& spec, int m, int rows) {
  return spec.kind == FeatureMapKind::rebased ? rebased_projection_size(m) : rows;
}

namespace feature_detail {

// rebased's LayerNorm of one column u (d entries): ŷ = (u − mean)/√(var + ε_LN) into y_hat;
// returns 1/√(var + ε_LN).
template <class T>
T rebased_layer_norm(const T* u, int d, T* y_hat) {
  double mean = 0.0, var = 0.0;
  for (int a = 0; a < d; ++a) mean += u[a];
  mean /= d;
  for (int a = 0; a < d; ++a) var += (u[a] - mean) * (u[a] - mean);
  var /= d;
  const double r = 1.0 / std::sqrt(var + kRebasedLayerNormEpsilon);
  for (int a = 0; a < d; ++a) y_hat[a] = static_cast<T>((u[a] - mean) * r);
  return static_cast<T>(r);
}

}  // namespace feature_detail

// y (rows, n) = s Ω x for Ω (rows, d) row-major: multiply's left operand must be column-major, so
// pieces of s Ω of at most kProjectionPiece elements are copied so on the stack; the pieces along
// d continue each element's chain of FMAs in order (transformer/matrix_product.hpp).
inline constexpr int kProjectionPiece = 4096;
template <class T>
void project_features(T* y, std::ptrdiff_t ldy, const T* omega, int rows,
                      const ConstStridedMap<T>& x, T scale) {
  const int d = static_cast<int>(x.rows()), n = static_cast<int>(x.cols());
  const int piece_d = std::min(d, kProjectionPiece);
  const int piece_rows = std::max(1, kProjectionPiece / piece_d);
  T piece[kProjectionPiece];
  for (int r0 = 0; r0 < rows; r0 += piece_rows) {
    const int pr = std::min(piece_rows, rows - r0);
    for (int d0 = 0; d0 < d; d0 += piece_d) {
      const int pd = std::min(piece_d, d - d0);
      copy_transposed(piece, pr, omega + static_cast<std::ptrdiff_t>(r0) * d + d0, d, pd, pr,
                      scale);  // piece(r, b) = s Ω(r0 + r, d0 + b)
      multiply(y + r0, ldy, piece, pr, x.data() + d0, 1, x.outerStride(), pr, n, pd, d0 > 0);
    }
  }
}

// s²|x_j|²/2, the term favor subtracts from every exponent of column j.
template <class T>
T half_squared_norm(const ConstStridedMap<T>& x, int j, T scale) {
  const T* x_j = x.col(j).data();
  return T(0.5) * scale * scale * contiguous_dot(x_j, x_j, x.rows());
}

// favor's keys share one shift over all n columns: phi (m, n) receives the exponents
// u = s Ωx − s²|x|²/2 (omega: D_φ rows), and the result is their maximum c. Any block of the
// columns is then finished where it is used: φ = exp(u − c) + ε, shifted_exponential_values(...,
// c, ε), the same values as feature_map_forward with FeatureShift::shared.
template <class T>
T favor_exponents(T* phi, const ConstStridedMap<T>& x, const T* omega, int m, T scale) {
  const int n = static_cast<int>(x.cols());
  project_features(phi, m, omega, m, x, scale);
  T shared_max = -std::numeric_limits<T>::infinity();
  for (int j = 0; j < n; ++j)
    shared_max = std::max(shared_max, subtract_and_maximum(phi + static_cast<std::ptrdiff_t>(j) * m,
                                                           m, half_squared_norm(x, j, scale)));
  return shared_max;
}

// Columns of favor's features whose shifts are found before their exponentials are taken.
inline constexpr int kFavorColumnGroup = 8;

// phi (m, n) = φ(s·x) for the n columns of x (d_head, n), m = D_φ; omega is
// (particle_rows(spec, m, d_head), d_head) row-major (unused, and may be null, for elu and the
// native dpfp).
template <class T>
void feature_map_forward(const FeatureMapSpec& spec, T* phi, const ConstStridedMap<T>& x,
                         const T* omega, int m, T scale, FeatureShift shift) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  const int rows = particle_rows(spec, m, hs);
  const T eps = static_cast<T>(spec.epsilon);
  if (spec.kind == FeatureMapKind::favor && shift == FeatureShift::shared) {
    const T shared_max = favor_exponents(phi, x, omega, m, scale);  // over all columns first
    shifted_exponential_values(phi, phi, static_cast<std::ptrdiff_t>(m) * n, shared_max, eps);
    return;
  }
  MatrixMap<T> u(phi, m, n);
  const int projected = projection_rows(spec, m, rows);
  if (rows > 0)  // s Ω x (projected, n)
    project_features(phi + projection_row(spec), m, omega, projected, x, scale);
  switch (spec.kind) {
    case FeatureMapKind::favor:  // a shift per column
      // In groups of columns, still in L1 from their subtraction: the shifts of a group first, so
      // that each column's maximum across the lanes is not waited for before its exponentials
      // (one head's 128 queries of 64 features: 4.7 → 3.9 µs, bench/RESULTS.md).
      for (int j0 = 0; j0 < n; j0 += kFavorColumnGroup) {
        const int w = std::min(kFavorColumnGroup, n - j0);
        T shift[kFavorColumnGroup];
        for (int j = 0; j < w; ++j)
          shift[j] = subtract_and_maximum(&u(0, j0 + j), m, half_squared_norm(x, j0 + j, scale));
        for (int j = 0; j < w; ++j)
          shifted_exponential_values(&u(0, j0 + j), &u(0, j0 + j), m, shift[j], eps);
      }
      break;
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
    case FeatureMapKind::dpfp:
      if (!spec.projected) {
        for (int j = 0; j < n; ++j)
          feature_detail::dpfp_column([&](int b) { return scale * x(b, j); }, hs, spec.dpfp_nu, eps,
                                      &u(0, j));
      } else {
        T y[kMaxDpfpProjection];  // u's column, kept while φ's column overwrites it
        for (int j = 0; j < n; ++j) {
          std::copy_n(&u(0, j), rows, y);
          feature_detail::dpfp_column([&](int b) { return y[b]; }, rows, spec.dpfp_nu, eps,
                                      &u(0, j));
        }
      }
      break;
    case FeatureMapKind::hedgehog:
      u.bottomRows(rows) = -u.topRows(rows);
      for (int j = 0; j < n; ++j) {
        feature_detail::softmax_in_place(u.col(j).head(rows));
        feature_detail::softmax_in_place(u.col(j).tail(rows));
        u.col(j).array() += eps;
      }
      break;
    case FeatureMapKind::rebased: {
      // Rows 1..d′ hold u, which the products overwrite: y is kept on the stack.
      const T* gamma = omega + static_cast<std::ptrdiff_t>(projected) * hs;
      const T* beta = gamma + static_cast<std::ptrdiff_t>(rebased_affine_rows(projected, hs)) * hs;
      const T root2 = std::numbers::sqrt2_v<T>, root_eps = static_cast<T>(std::sqrt(spec.epsilon));
      T y[kMaxRebasedProjection];
      for (int j = 0; j < n; ++j) {
        auto col = u.col(j);
        feature_detail::rebased_layer_norm(&col(1), projected, y);
        for (int a = 0; a < projected; ++a) y[a] = gamma[a] * y[a] + beta[a];
        col(0) = root_eps;
        for (int i = 0, at = 1; i < projected; at += projected - i, ++i) {
          col(at) = y[i] * y[i];
          for (int k = i + 1; k < projected; ++k) col(at + k - i) = root2 * y[i] * y[k];
        }
      }
      break;
    }
    case FeatureMapKind::taylor: {
      // Rows 1..d′ hold u; the products (i, j ≥ i) follow from row 1 + d′ on, row i's run
      // u_i u_{i..d′−1} read from rows 1 + i.. before any of them is written.
      const T c = T(1) / std::numbers::sqrt2_v<T>;  // c_ii
      for (int j = 0; j < n; ++j) {
        auto col = u.col(j);
        col(0) = T(1);
        for (int i = 0, at = 1 + rows; i < rows; at += rows - i, ++i) {
          col.segment(at, rows - i) = col(1 + i) * col.segment(1 + i, rows - i);
          col(at) *= c;
        }
      }
      break;
    }
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
//   taylor:      rows 1..d′ of φ are u itself, so G_k = dphi_{u_k} + Σ_{j≠k} dphi_{kj} u_j
//                + √2 dphi_{kk} u_k over the products (i, j) = (k, j) or (j, k), i ≤ j
//   projected dpfp: G = dy of the native dpfp below on y = u (recomputed per column from P and x)
//   rebased:     u, ŷ and y recomputed per column from P and x; dy_i = 2 y_i dphi_ii
//                + √2 Σ_{k≠i} dphi_ik y_k; dγ += dy ⊙ ŷ, dβ += dy (into the block's γ, β rows of
//                domega); G = r (dŷ − mean dŷ − ŷ mean(dŷ ⊙ ŷ)) with dŷ = γ ⊙ dy, r = 1/√(var u +
//                ε_LN)
// The taylor and rebased G sit in rows 1..d′ of dphi (taylor's only reads the rows after them,
// rebased's every row before it writes), the projected dpfp's in the top d′ rows.
// elu and dpfp act on y = s x directly:
//   elu:   ∂φ_a/∂x_a = s min(φ_a, 1)  (s for y_a > 0, s e^{y_a} = s φ_a otherwise)
//   dpfp:  φ_{ia} = r_a r_{a−i}  ⇒  dr_a += dphi_{ia} r_{a−i},  dr_{a−i} += dphi_{ia} r_a,
//          dx_b += s (dr_b [y_b > 0] − dr_{d+b} [y_b < 0])
template <class T>
void feature_map_backward(const FeatureMapSpec& spec, StridedMap<T>& dx, T* dphi, const T* phi,
                          const ConstStridedMap<T>& x, const T* omega, int m, T scale,
                          T* domega = nullptr) {
  const int n = static_cast<int>(x.cols()), hs = static_cast<int>(x.rows());
  const int rows = particle_rows(spec, m, hs), projected = projection_rows(spec, m, rows);
  ConstMatrixMap<T> omega_t(omega, hs, projected);
  MatrixMap<T> g(dphi, m, n);
  ConstMatrixMap<T> f(phi, m, n);
  const T eps = static_cast<T>(spec.epsilon);
  bool scaled = false;  // g's projected rows already hold s G
  switch (spec.kind) {
    case FeatureMapKind::favor:  // every row of g is projected: s G in one pass
      for (int j0 = 0; j0 < n; j0 += kFavorColumnGroup) {  // the sums of a group first
        const int w = std::min(kFavorColumnGroup, n - j0);
        T sum[kFavorColumnGroup];
        for (int j = 0; j < w; ++j)
          sum[j] = feature_detail::favor_gradient_column(g.col(j0 + j).data(), f.col(j0 + j).data(),
                                                         m, eps, scale);
        for (int j = 0; j < w; ++j) dx.col(j0 + j) -= (scale * scale * sum[j]) * x.col(j0 + j);
      }
      scaled = true;
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
    case FeatureMapKind::dpfp:
      if (!spec.projected) {
        for (int j = 0; j < n; ++j)
          feature_detail::dpfp_column_backward([&](int b) { return scale * x(b, j); }, hs,
                                               spec.dpfp_nu, &g(0, j),
                                               [&](int b, T dy) { dx(b, j) += scale * dy; });
      } else {
        T y[kMaxDpfpProjection], gy[kMaxDpfpProjection];  // u and G of one column
        for (int j = 0; j < n; ++j) {
          for (int b = 0; b < rows; ++b) y[b] = scale * ordered_dot(omega_t.col(b), x.col(j));
          std::fill_n(gy, rows, T(0));
          feature_detail::dpfp_column_backward([&](int b) { return y[b]; }, rows, spec.dpfp_nu,
                                               &g(0, j), [&](int b, T dy) { gy[b] += dy; });
          std::copy_n(gy, rows, &g(0, j));  // the column's dphi is read: G in its top rows
        }
      }
      break;
    case FeatureMapKind::hedgehog:
      for (int j = 0; j < n; ++j) {
        auto plus = g.col(j).head(rows);
        auto minus = g.col(j).tail(rows);
        feature_detail::softmax_backward_in_place(plus, f.col(j).head(rows), eps);
        feature_detail::softmax_backward_in_place(minus, f.col(j).tail(rows), eps);
        plus -= minus;  // u enters the second softmax as −u
      }
      break;
    case FeatureMapKind::rebased: {
      const int affine = rebased_affine_rows(projected, hs);
      const T* gamma = omega + static_cast<std::ptrdiff_t>(projected) * hs;
      const T* beta = gamma + static_cast<std::ptrdiff_t>(affine) * hs;
      T* dgamma = domega ? domega + static_cast<std::ptrdiff_t>(projected) * hs : nullptr;
      T* dbeta = domega ? dgamma + static_cast<std::ptrdiff_t>(affine) * hs : nullptr;
      const T root2 = std::numbers::sqrt2_v<T>;
      T u_col[kMaxRebasedProjection], y_hat[kMaxRebasedProjection], y[kMaxRebasedProjection],
          dy[kMaxRebasedProjection];
      for (int j = 0; j < n; ++j) {
        auto gj = g.col(j);
        // u = s Ω x again, its LayerNorm and y = γ ⊙ ŷ + β
        for (int a = 0; a < projected; ++a)
          u_col[a] = scale * ordered_dot(omega_t.col(a), x.col(j));
        const T r = feature_detail::rebased_layer_norm(u_col, projected, y_hat);
        for (int a = 0; a < projected; ++a) y[a] = gamma[a] * y_hat[a] + beta[a];
        // φ_ii = y_i², φ_ik = √2 y_i y_k:  dy_i += 2 y_i dφ_ii + √2 Σ_k dφ_ik y_k (both orders)
        std::fill_n(dy, projected, T(0));
        for (int i = 0, at = 1; i < projected; at += projected - i, ++i) {
          dy[i] += T(2) * y[i] * gj(at);
          for (int k = i + 1; k < projected; ++k) {
            const T gik = root2 * gj(at + k - i);
            dy[i] += gik * y[k];
            dy[k] += gik * y[i];
          }
        }
        // y = γ ⊙ ŷ + β:  dγ += dy ⊙ ŷ, dβ += dy, dŷ = dy ⊙ γ
        // ŷ = (u − mean u) r:  du = r (dŷ − mean dŷ − ŷ mean(dŷ ⊙ ŷ))
        double mean_d = 0.0, mean_dy = 0.0;
        for (int a = 0; a < projected; ++a) {
          if (dgamma) {
            dgamma[a] += dy[a] * y_hat[a];
            dbeta[a] += dy[a];
          }
          dy[a] *= gamma[a];
          mean_d += dy[a];
          mean_dy += dy[a] * y_hat[a];
        }
        mean_d /= projected;
        mean_dy /= projected;
        for (int a = 0; a < projected; ++a)  // G in rows 1..d′, read after the products
          gj(1 + a) = static_cast<T>(r * (dy[a] - mean_d - y_hat[a] * mean_dy));
      }
      break;
    }
    case FeatureMapKind::taylor: {
      const T root2 = std::numbers::sqrt2_v<T>;  // ∂(c_kk u_k²)/∂u_k = √2 u_k
      for (int j = 0; j < n; ++j) {
        auto gj = g.col(j);
        const auto uj = f.col(j).segment(1, rows);
        for (int i = 0, at = 1 + rows; i < rows; at += rows - i, ++i) {
          const int rest = rows - i - 1;  // the products (i, j > i) at rows at + 1..
          const auto gq = gj.segment(at + 1, rest);
          gj(1 + i) += root2 * gj(at) * uj(i) + ordered_dot(gq, uj.segment(i + 1, rest));
          gj.segment(2 + i, rest) += uj(i) * gq;
        }
      }
      break;
    }
  }
  if (rows == 0) return;
  auto gu = g.middleRows(projection_row(spec), projected);
  if (!scaled) gu *= scale;         // s G
  multiply(dx, omega_t, gu, true);  // (d_head, projected)(projected, n)
  if (domega)                       // (∂ℓ/∂Ω)ᵀ (d_head, projected)
    multiply_transposed(MatrixMap<T>(domega, hs, projected), x, gu, true);
}

}  // namespace cpm
