#pragma once
// Causal (decoder) linear attention for every head of a batch: position i attends to j ≤ i,
//   out_i = φ(q_i)ᵀ S_i / (φ(q_i)ᵀ z_i + δ),  S_i = Σ_{j≤i} φ(k_j) v_jᵀ (m, d_head),
//   z_i = Σ_{j≤i} φ(k_j) (m).
// The sequence is processed in chunks of kCausalChunk tokens: inside a chunk the masked (C × C)
// product A_ij = φ(q_i)ᵀφ(k_j), j ≤ i, gives the terms of the chunk's own keys, and the running
// state S, z of the earlier chunks (kept in double, cast to T once per chunk) the rest. With
// m = D_φ the rows of φ, the cost is O(L · (C + d_head) · m) per head and the state O(m · d_head);
// no L × L matrix is formed. The backward pass runs over the chunks in reverse with the suffix sums
// dS, dz and recovers each chunk's starting state from the final one by subtracting the chunk's own
// contribution (the first chunk's is zero), so the cache holds only the final state besides φ(Q),
// φ(K) and the denominators.
// The query features and the feature-map backward are applied one chunk at a time (every map acts
// on each token separately, its max-shifts held constant), so the per-thread scratch does not grow
// with L and a chunk's data stays in cache while it is used.
// The chunk products run through transformer/matrix_product.hpp, whose left operand is
// column-major: the chunk's φ(K) is copied transposed, (C, m), and the masked scores are kept as
// their transpose Aᵀ (C × C, column i holding A_i·), so that every product reads its operands in
// place.
// Causality: the favor key shift c is one maximum over the whole sequence. It cancels in the
// normalisation, except against ε: the output at i depends on later tokens only through ε (not at
// all for ε = 0). The maps without a shared shift are exactly causal.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "parallel/claimed_items.hpp"
#include "transformer/attention_feature_maps.hpp"
#include "transformer/attention_layout.hpp"
#include "transformer/interleaved_sum.hpp"
#include "transformer/linear_attention.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/particle_gradient.hpp"
#include "transformer/register_reductions.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

inline constexpr int kCausalChunk = 64;  // tokens per chunk

// The cache of linear attention: φ(Q), φ(K) (m, L), the inverse denominators (L), and in kv, z
// the state after the last token, Σ_{j<L} φ(k_j) v_jᵀ and Σ_{j<L} φ(k_j).
template <class T>
using CausalLinearAttentionCache = LinearAttentionCache<T>;

// A (d_head, w) block of columns [t0, t0 + w) of one head's q, k or v.
template <class T>
ConstStridedMap<T> token_columns(const ConstStridedMap<T>& x, int t0, int w) {
  return ConstStridedMap<T>(x.data() + static_cast<std::ptrdiff_t>(t0) * x.outerStride(), x.rows(),
                            w, Eigen::OuterStride<>(x.outerStride()));
}
template <class T>
StridedMap<T> token_columns(StridedMap<T>& x, int t0, int w) {
  return StridedMap<T>(x.data() + static_cast<std::ptrdiff_t>(t0) * x.outerStride(), x.rows(), w,
                       Eigen::OuterStride<>(x.outerStride()));
}

// Brings columns [t0, t0 + w) of x (column-major, any outer stride) towards the core ahead of
// their use: at long lengths the caches of φ and the q | k | v columns leave L2, and a chunk's
// products would otherwise wait for each line.
template <class Map>
void prefetch_columns(const Map& x, int t0, int w) {
  constexpr int line = 64 / sizeof(typename Map::Scalar);
  for (int j = t0; j < t0 + w; ++j)
    for (int r = 0; r < x.rows(); r += line)
      __builtin_prefetch(x.data() + r + j * x.outerStride(), 0, 2);
}

// Per-thread scratch of the causal linear attention, in elements of T (independent of the length)
// and of double.
inline std::size_t causal_linear_attention_scratch(int m, int /*length*/, int head_size) {
  const std::size_t c = kCausalChunk, mh = std::size_t(m) * head_size;
  return per_thread_block(3 * c * m + 4 * mh + 3 * std::size_t(m) + 2 * c * head_size + 2 * c * c +
                          2 * c);
}
inline std::size_t causal_linear_attention_scratch_double(int m, int head_size) {
  return per_thread_block(2 * std::size_t(m) * (head_size + 1));
}

// Aᵀ (w, w) with Aᵀ(j, i) = A_ij = φ(q_i)ᵀφ(k_j) for j ≤ i and 0 below the diagonal: φ(K)ᵀ (w, m)
// · φ(Q), each tile of columns [i0, i1) over the row tiles that reach j < i1 only.
template <class T>
void masked_chunk_scores(T* scores_t, const T* phi_k_t, const T* phi_q, int w, int m) {
  constexpr int row_tile = kProductRowTile<T>, column_tile = kProductColumnTile<T>;
  for (int i0 = 0; i0 < w; i0 += column_tile) {
    const int i1 = std::min(w, i0 + column_tile);
    const int rows = std::min(w, (i1 + row_tile - 1) / row_tile * row_tile);
    multiply(scores_t + i0 * w, w, phi_k_t, w, phi_q + static_cast<std::ptrdiff_t>(i0) * m, 1, m,
             rows, i1 - i0, m, false);
  }
  for (int i = 0; i < w; ++i) std::fill(scores_t + i * w + i + 1, scores_t + (i + 1) * w, T(0));
}

// dA (w, w), dA_ij = dn_i·v_j + dden_i for j ≤ i and 0 above: dn (w, d_head) · v (d_head, w,
// leading dimension ldv), each tile of columns [j0, j1) over the row tiles from the one holding i =
// j0.
template <class T>
void masked_chunk_score_gradient(T* dscores, const T* dn_t, const T* v, std::ptrdiff_t ldv,
                                 const T* dden, int w, int hs) {
  constexpr int row_tile = kProductRowTile<T>, column_tile = kProductColumnTile<T>;
  for (int j0 = 0; j0 < w; j0 += column_tile) {
    const int r0 = j0 / row_tile * row_tile;
    multiply(dscores + r0 + j0 * w, w, dn_t + r0, w, v + j0 * ldv, 1, ldv, w - r0,
             std::min(column_tile, w - j0), hs, false);
  }
  for (int j = 0; j < w; ++j) {
    T* column = dscores + j * w;
    std::fill(column, column + j, T(0));
    for (int i = j; i < w; ++i) column[i] += dden[i];
  }
}

// out (C, N); qkv (qkv_rows, N); m = D_φ; omega: H blocks of (particle_rows(spec, m, d_head),
// d_head) row-major particles for this layer (none for elu and the native dpfp: omega may be null);
// scratch: per-thread blocks of causal_linear_attention_scratch elements (no double scratch is
// used). Throws std::invalid_argument when m is no D_φ of the map. With spec.key_normalisation the
// keys' features are φ(k)/‖φ(k)‖, their lengths kept in cache.key_norm.
template <class T>
void causal_linear_attention_forward(T* out, const CausalLinearAttentionCache<T>& cache,
                                     const T* qkv, const T* omega, const AttentionLayout& a,
                                     const FeatureMapSpec& spec, int m, T* scratch, double*) {
  const int L = a.length, hs = a.head_size;
  const int rows = particle_rows(spec, m, hs);  // checked here, outside the parallel region
  const T scale = feature_input_scale<T>(spec, hs);
  const std::size_t per_thread = causal_linear_attention_scratch(m, L, hs);
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads;
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    const T* om = omega + static_cast<std::ptrdiff_t>(h) * rows * hs;
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    T* phi_q = cache.phi_q + static_cast<std::ptrdiff_t>(bh) * m * L;
    T* phi_k = cache.phi_k + static_cast<std::ptrdiff_t>(bh) * m * L;
    // favor's keys share one shift over the sequence: their exponents first, each chunk's
    // exponentials where it is used. The other maps act on each chunk alone.
    const bool shared_shift = spec.kind == FeatureMapKind::favor;
    const T key_shift = shared_shift ? favor_exponents(phi_k, k, om, m, scale) : T(0);
    ConstMatrixMap<T> fq(phi_q, m, L), fk(phi_k, m, L);
    Eigen::Map<Matrix<double>> kv(cache.kv + static_cast<std::ptrdiff_t>(bh) * m * hs, m, hs);
    Eigen::Map<Vector<double>> z(cache.z + static_cast<std::ptrdiff_t>(bh) * m, m);
    MatrixMap<T> kv_t(work, hs, m);                       // Sᵀ
    T* chunk = work + std::size_t(m) * hs;                // m · d_head + m
    T* scores_t = chunk + std::size_t(m) * (hs + 1);      // (C, C)
    T* phi_k_t = scores_t + kCausalChunk * kCausalChunk;  // (C, m)
    T* ones = phi_k_t + std::size_t(kCausalChunk) * m;    // (C)
    std::fill_n(ones, kCausalChunk, T(1));
    T* inv = cache.inverse_denominator + static_cast<std::ptrdiff_t>(bh) * L;
    auto o = a.output(out, b, h);
    kv.setZero();  // S, z: the state before the chunk
    z.setZero();
    for (int t0 = 0; t0 < L; t0 += kCausalChunk) {
      const int w = std::min(kCausalChunk, L - t0);
      if (t0 + w < L) {  // the next chunk's operands, while this one runs
        const int next = t0 + w, nw = std::min(kCausalChunk, L - next);
        prefetch_columns(fk, next, nw);
        for (const auto& x : {q, k, v}) prefetch_columns(x, next, nw);
      }
      T* phi_k_c = phi_k + static_cast<std::ptrdiff_t>(t0) * m;
      if (shared_shift)
        shifted_exponential_values(phi_k_c, phi_k_c, static_cast<std::ptrdiff_t>(m) * w, key_shift,
                                   static_cast<T>(spec.epsilon));
      else
        feature_map_forward(spec, phi_k_c, token_columns(k, t0, w), om, m, scale,
                            FeatureShift::per_column);
      if (spec.key_normalisation != KeyNormalisation::none)  // φ(k_j) / ‖φ(k_j)‖
        normalise_key_columns(spec.key_normalisation, phi_k_c, m, w,
                              cache.key_norm + static_cast<std::ptrdiff_t>(bh) * L + t0);
      feature_map_forward(spec, phi_q + static_cast<std::ptrdiff_t>(t0) * m,
                          token_columns(q, t0, w), om, m, scale,
                          FeatureShift::per_column);  // (m, w)
      const auto fq_c = fq.middleCols(t0, w);
      const auto fk_c = fk.middleCols(t0, w);
      const auto v_c = v.middleCols(t0, w);
      auto o_c = o.middleCols(t0, w);
      copy_transposed(phi_k_t, w, fk_c.data(), m, m, w);
      masked_chunk_scores(scores_t, phi_k_t, fq_c.data(), w, m);
      if (t0 > 0) {  // the first chunk has no earlier state
        kv_t = kv.transpose().template cast<T>();
        multiply(o_c, kv_t, fq_c);  // Sᵀ φq_i: earlier chunks (d_head, w)
      }
      multiply_triangular(o_c.data(), o_c.outerStride(), v_c.data(), v_c.outerStride(), scores_t, 1,
                          w, hs, w, w, true, t0 > 0);  // Σ_{j≤i} A_ij v_j
      for (int i = 0; i < w; ++i) {
        const T* a_i = scores_t + i * w;  // A_i·, zero beyond j = i
        const double own =
            lane_sum<double>(i + 1, [&](std::ptrdiff_t j) { return double(a_i[j]); });
        const double den = kAttentionDenominatorGuard +
                           contiguous_dot_in_double(fq_c.col(i).data(), z.data(), m) + own;
        inv[t0 + i] = static_cast<T>(1.0 / den);
        o_c.col(i) *= inv[t0 + i];
      }
      add_chunked_outer_products<T>(kv, z, fk_c.data(), v_c.data(), v_c.outerStride(), nullptr, w,
                                    chunk, ones);  // Σ_{j in chunk} φk_j v_jᵀ, Σ_{j in chunk} φk_j
    }
  });
}

// Differentiates the forward above. dqkv must be zeroed by the caller (q and k may share rows).
// Per chunk, with S, z the state before it:
//   out_i = n_i / den_i:  dn_i = dout_i / den_i,  dden_i = −dout_i·out_i / den_i
//   n_i = Sᵀφq_i + Σ_{j≤i} A_ij v_j,  den_i = φq_iᵀz + Σ_{j≤i} A_ij + δ:
//     dA_ij = dn_i·v_j + dden_i (j ≤ i),  dφq_i = S dn_i + z dden_i + Σ_j dA_ij φk_j,
//     dφk_j = Σ_i dA_ij φq_i,  dv_j = Σ_i A_ij dn_i,  dS = Σ_i φq_i dn_iᵀ,  dz = Σ_i φq_i dden_i
//   S = Σ_{j in earlier chunks} φk_j v_jᵀ:  dφk_j += dS' v_j + dz',  dv_j += dS'ᵀ φk_j,
// where dS', dz' are the sums of dS, dz over the later chunks. A non-null domega (laid out as
// omega) accumulates ∂ℓ/∂Ω (transformer/particle_gradient.hpp).
template <class T>
void causal_linear_attention_backward(T* dqkv, const T* dout, const T* out,
                                      const CausalLinearAttentionCache<T>& cache, const T* qkv,
                                      const T* omega, const AttentionLayout& a,
                                      const FeatureMapSpec& spec, int m, T* scratch,
                                      double* scratch_double, T* domega = nullptr) {
  const int L = a.length, hs = a.head_size;
  const int rows = particle_rows(spec, m, hs);  // checked here, outside the parallel region
  const std::ptrdiff_t block = static_cast<std::ptrdiff_t>(rows) * hs;
  T* partial =
      domega ? particle_gradient_partials<T>(std::size_t(a.batch) * a.heads * block) : nullptr;
  const T scale = feature_input_scale<T>(spec, hs);
  const std::size_t per_thread = causal_linear_attention_scratch(m, L, hs);
  const std::size_t per_thread_double = causal_linear_attention_scratch_double(m, hs);
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads;
    const int thread = omp_thread();
    T* work = scratch + per_thread * static_cast<std::size_t>(thread);
    double* work_double = scratch_double + per_thread_double * static_cast<std::size_t>(thread);
    const T* om = omega + static_cast<std::ptrdiff_t>(h) * rows * hs;
    T* dom = domega ? partial + bh * block : nullptr;
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto dq = a.block(dqkv, b, h, 0);
    auto dk = a.block(dqkv, b, h, a.k_offset());
    auto dv = a.block(dqkv, b, h, a.v_offset());
    const auto o = a.output(out, b, h);
    const auto d_o = a.output(dout, b, h);
    ConstMatrixMap<T> fq(cache.phi_q + static_cast<std::ptrdiff_t>(bh) * m * L, m, L);
    ConstMatrixMap<T> fk(cache.phi_k + static_cast<std::ptrdiff_t>(bh) * m * L, m, L);
    const T* inv = cache.inverse_denominator + static_cast<std::ptrdiff_t>(bh) * L;

    // work: dφq, dφk of one chunk (m, C) each, the states cast to T, then the chunk's tiles.
    T* small = work + 2 * std::size_t(kCausalChunk) * m;
    const std::size_t mh = std::size_t(m) * hs;
    MatrixMap<T> kv_t(small, m, hs), dkv_t(small + mh, m, hs), dkv_tt(small + 2 * mh, hs, m),
        chunk_kv(small + 3 * mh, m, hs);
    VectorMap<T> chunk_z(small + 4 * mh, m), z_t(small + 4 * mh + m, m),
        dz_t(small + 4 * mh + 2 * m, m);  // chunk_kv, chunk_z: add_chunked_outer_products' chunk
    T* ones = small + 4 * mh + 3 * m;     // (C)
    std::fill_n(ones, kCausalChunk, T(1));
    T* chunk_work = ones + kCausalChunk;
    Eigen::Map<Matrix<double>> kv(work_double, m, hs), dkv(work_double + m * hs, m, hs);
    Eigen::Map<Vector<double>> z(work_double + 2 * m * hs, m), dz(work_double + 2 * m * hs + m, m);

    kv = Eigen::Map<const Matrix<double>>(cache.kv + static_cast<std::ptrdiff_t>(bh) * m * hs, m,
                                          hs);
    z = Eigen::Map<const Vector<double>>(cache.z + static_cast<std::ptrdiff_t>(bh) * m, m);
    dkv.setZero();  // dS', dz': the sums over the chunks after this one
    dz.setZero();
    for (int t0 = (L - 1) / kCausalChunk * kCausalChunk; t0 >= 0; t0 -= kCausalChunk) {
      const int w = std::min(kCausalChunk, L - t0);
      if (t0 > 0) {  // the previous chunk's operands, while this one runs
        const int previous = t0 - kCausalChunk;
        for (const auto& x : {fq, fk}) prefetch_columns(x, previous, kCausalChunk);
        for (const auto& x : {q, k, v, o, d_o}) prefetch_columns(x, previous, kCausalChunk);
        for (const auto& x : {dq, dk, dv}) prefetch_columns(x, previous, kCausalChunk);
      }
      const auto fq_c = fq.middleCols(t0, w);
      const auto fk_c = fk.middleCols(t0, w);
      const auto v_c = v.middleCols(t0, w);
      MatrixMap<T> dfq_c(work, m, w), dfk_c(work + std::size_t(kCausalChunk) * m, m, w);
      auto dv_c = dv.middleCols(t0, w);
      constexpr std::size_t C = kCausalChunk;
      MatrixMap<T> dn(chunk_work, hs, w), dn_t(chunk_work + hs * C, w, hs);
      MatrixMap<T> scores_t(chunk_work + 2 * hs * C, w, w);  // Aᵀ
      MatrixMap<T> dscores(chunk_work + 2 * hs * C + C * C, w, w);
      VectorMap<T> dden(chunk_work + 2 * hs * C + 2 * C * C, w);
      T* phi_k_t = chunk_work + 2 * hs * C + 2 * C * C + C;  // (w, m)

      // The state before the chunk: none for the first one (S = 0, z = 0 exactly, not what
      // subtracting every chunk from the final state leaves), and no later chunks for the last
      // one (dS' = 0, dz' = 0). Products with a zero state are skipped.
      const bool earlier = t0 > 0, later = t0 + w < L;
      if (earlier) {
        multiply_transposed(chunk_kv, fk_c, v_c);  // undo kv += Σ_{j in chunk} φk_j v_jᵀ
        kv -= chunk_kv.template cast<double>();
        multiply(chunk_z.data(), m, fk_c.data(), m, ones, 1, w, m, 1, w, false);  // and z
        z -= chunk_z.template cast<double>();
        kv_t = kv.template cast<T>();
        z_t = z.template cast<T>();
      }
      if (later) {
        dkv_t = dkv.template cast<T>();
        copy_transposed(dkv_tt.data(), hs, dkv_t.data(), m, m, hs);
        dz_t = dz.template cast<T>();
      }

      for (int i = 0; i < w; ++i) {
        dn.col(i) = d_o.col(t0 + i) * inv[t0 + i];  // dn_i = dout_i / den_i
        dden[i] = -ordered_dot(d_o.col(t0 + i), o.col(t0 + i)) * inv[t0 + i];
      }
      copy_transposed(dn_t.data(), w, dn.data(), hs, hs, w);
      copy_transposed(phi_k_t, w, fk_c.data(), m, m, w);
      masked_chunk_scores(scores_t.data(), phi_k_t, fq_c.data(), w, m);  // recompute Aᵀ
      masked_chunk_score_gradient(dscores.data(), dn_t.data(), v_c.data(), v_c.outerStride(),
                                  dden.data(), w, hs);

      if (earlier) {
        multiply(dfq_c, kv_t, dn);                  // S dn_i (m, w)
        dfq_c.noalias() += z_t * dden.transpose();  // z dden_i
      }
      multiply_triangular(dfq_c.data(), m, fk_c.data(), m, dscores.data(), w, 1, m, w, w, true,
                          earlier);  // Σ_j dA_ij φk_j
      if (later) {
        multiply(dfk_c, dkv_t, v_c);  // dS' v_j (m, w)
        dfk_c.colwise() += dz_t;      // dz'
      }
      multiply_triangular(dfk_c.data(), m, fq_c.data(), m, dscores.data(), 1, w, m, w, w, false,
                          later);                     // Σ_i dA_ij φq_i
      if (later) multiply(dv_c, dkv_tt, fk_c, true);  // dS'ᵀ φk_j (d_head, w)
      multiply_triangular(dv_c.data(), dv_c.outerStride(), dn.data(), hs, scores_t.data(), w, 1, hs,
                          w, w, false, true);  // Σ_i A_ij dn_i

      if (earlier)  // dS = Σ_i φq_i dn_iᵀ, dz = Σ_i φq_i dden_i, for the chunks before
        add_chunked_outer_products<T>(dkv, dz, fq_c.data(), dn.data(), hs, dden.data(), w,
                                      chunk_kv.data(), ones);

      // The chunk's tokens are complete: each map acts on every token alone.
      auto dq_c = token_columns(dq, t0, w);
      auto dk_c = token_columns(dk, t0, w);
      feature_map_backward(spec, dq_c, dfq_c.data(), fq_c.data(), token_columns(q, t0, w), om, m,
                           scale, dom);
      const T* phi_k_c = fk_c.data();
      if (spec.key_normalisation != KeyNormalisation::none) {  // dφ̃ → dφ; φ into dφq's place
        key_normalisation_backward(spec.key_normalisation, dfk_c.data(), fk_c.data(),
                                   cache.key_norm + static_cast<std::ptrdiff_t>(bh) * L + t0, m, w,
                                   dfq_c.data());
        phi_k_c = dfq_c.data();
      }
      feature_map_backward(spec, dk_c, dfk_c.data(), phi_k_c, token_columns(k, t0, w), om, m, scale,
                           dom);
    }
  });
  if (domega) add_particle_gradient_partials(domega, partial, a.batch, a.heads, block);
}

}  // namespace cpm
