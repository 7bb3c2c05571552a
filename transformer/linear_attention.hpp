#pragma once
// Linear (kernel) attention for every head of a batch (docs/model.md §2):
//   out_i = φ(q_i)ᵀ (Σ_{j<len} φ(k_j) v_jᵀ) / (φ(q_i)ᵀ Σ_{j<len} φ(k_j) + δ)
// Cost O(L · m · d_head) per head, m = D_φ the rows of φ; no L × L matrix is formed. Keys at
// padding positions (j ≥ len) are left out of both sums. The sums over the sequence (KV and z) are
// accumulated in double.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "parallel/claimed_items.hpp"
#include "transformer/attention_feature_maps.hpp"
#include "transformer/attention_layout.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/particle_gradient.hpp"
#include "transformer/register_reductions.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

inline constexpr double kAttentionDenominatorGuard = 1e-12;  // δ
inline constexpr int kSequenceChunk = 64;  // tokens per float partial sum before adding in double

// What the forward pass keeps for the backward pass, per (sequence b, head h), index b·H + h.
template <class T>
struct LinearAttentionCache {
  T* phi_q;                // (m, L) each
  T* phi_k;                // (m, L) each, zero at padding
  double* kv;              // (m, d_head) each: Σ_j φ(k_j) v_jᵀ
  double* z;               // (m) each: Σ_j φ(k_j)
  T* inverse_denominator;  // (L) each
  T* key_norm = nullptr;   // (L) each, ‖φ(k_j)‖ when the keys are normalised (else unused)
};

// Per-thread scratch of the linear attention, in elements of T.
inline std::size_t linear_attention_scratch(int m, int length, int head_size) {
  const std::size_t mh = std::size_t(m) * head_size;
  return per_thread_block(2 * std::size_t(m) * length + std::size_t(head_size + 1) * length +
                          4 * mh + 3 * std::size_t(m) + kSequenceChunk);
}
inline std::size_t linear_attention_scratch_double(int m, int head_size) {
  return per_thread_block(std::size_t(m) * (head_size + 1));
}

// a (m, d) += Σ_{j<n} x_j y_jᵀ and s (m) += Σ_{j<n} x_j c_j in double (c_j = 1 when c is null),
// from float products over chunks of kSequenceChunk tokens. x (m, n) is contiguous, y (d, n) has
// leading dimension ldy; chunk holds m · d + m elements of T, ones kSequenceChunk ones.
template <class T>
void add_chunked_outer_products(Eigen::Map<Matrix<double>>& a, Eigen::Map<Vector<double>>& s,
                                const T* x, const T* y, std::ptrdiff_t ldy, const T* c, int n,
                                T* chunk, const T* ones) {
  const int m = static_cast<int>(a.rows()), d = static_cast<int>(a.cols());
  MatrixMap<T> xy(chunk, m, d);
  VectorMap<T> xc(chunk + std::size_t(m) * d, m);
  for (int j0 = 0; j0 < n; j0 += kSequenceChunk) {
    const int w = std::min(kSequenceChunk, n - j0);
    const T* x_c = x + static_cast<std::ptrdiff_t>(j0) * m;
    multiply(xy.data(), m, x_c, m, y + j0 * ldy, ldy, 1, m, d, w, false);  // Σ x_j y_jᵀ
    a += xy.template cast<double>();
    multiply(xc.data(), m, x_c, m, c ? c + j0 : ones, 1, w, m, 1, w, false);  // Σ x_j c_j
    s += xc.template cast<double>();
  }
}

// out (C, N); qkv (qkv_rows, N); m = D_φ; omega: H blocks of (particle_rows(spec, m, d_head),
// d_head) row-major particles for this layer (none for elu and the native dpfp: omega may be null);
// lengths (B); scratch: per-thread blocks of linear_attention_scratch (+ _double) elements. Throws
// std::invalid_argument when m is no D_φ of the map. With spec.key_normalisation the keys' features
// are φ(k)/‖φ(k)‖, their lengths kept in cache.key_norm.
template <class T>
void linear_attention_forward(T* out, const LinearAttentionCache<T>& cache, const T* qkv,
                              const T* omega, const int* lengths, const AttentionLayout& a,
                              const FeatureMapSpec& spec, int m, T* scratch, double*) {
  const int L = a.length, hs = a.head_size;
  const int rows = particle_rows(spec, m, hs);  // checked here, outside the parallel region
  const T scale = feature_input_scale<T>(spec, hs);
  const std::size_t per_thread = linear_attention_scratch(m, L, hs);
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    const T* om = omega + static_cast<std::ptrdiff_t>(h) * rows * hs;
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    T* phi_q = cache.phi_q + static_cast<std::ptrdiff_t>(bh) * m * L;
    T* phi_k = cache.phi_k + static_cast<std::ptrdiff_t>(bh) * m * L;
    feature_map_forward(spec, phi_q, q, om, m, scale, FeatureShift::per_column);  // (m, L)
    feature_map_forward(spec, phi_k,
                        ConstStridedMap<T>(k.data(), hs, len, Eigen::OuterStride<>(a.qkv_rows())),
                        om, m, scale, FeatureShift::shared);  // (m, len)
    MatrixMap<T> fk(phi_k, m, L);
    fk.rightCols(L - len).setZero();
    if (spec.key_normalisation != KeyNormalisation::none)  // φ(k_j) / ‖φ(k_j)‖
      normalise_key_columns(spec.key_normalisation, phi_k, m, len,
                            cache.key_norm + static_cast<std::ptrdiff_t>(bh) * L);
    Eigen::Map<Matrix<double>> kv(cache.kv + static_cast<std::ptrdiff_t>(bh) * m * hs, m, hs);
    Eigen::Map<Vector<double>> z(cache.z + static_cast<std::ptrdiff_t>(bh) * m, m);
    MatrixMap<T> kv_t(work, hs, m);  // KVᵀ cast to T
    T* ones = work + std::size_t(m) * hs;
    std::fill_n(ones, kSequenceChunk, T(1));
    kv.setZero();
    z.setZero();
    add_chunked_outer_products<T>(kv, z, phi_k, v.data(), v.outerStride(), nullptr, len,
                                  ones + kSequenceChunk, ones);  // Σ_j φ(k_j) v_jᵀ, Σ_j φ(k_j)
    kv_t = kv.transpose().template cast<T>();
    auto o = a.output(out, b, h);
    ConstMatrixMap<T> fq(phi_q, m, L);
    multiply(o, kv_t, fq);  // numerators (d_head, L)
    T* inv = cache.inverse_denominator + static_cast<std::ptrdiff_t>(bh) * L;
    for (int i = 0; i < L; ++i) {
      const double den =
          kAttentionDenominatorGuard + contiguous_dot_in_double(fq.col(i).data(), z.data(), m);
      inv[i] = static_cast<T>(1.0 / den);
      o.col(i) *= inv[i];
    }
  });
}

// Differentiates the forward above. dqkv must be zeroed by the caller (q and k may share rows).
//   out_i = n_i / den_i:  dn_i = dout_i / den_i,  dden_i = −dout_i·out_i / den_i
//   n_i = KVᵀ φq_i:       dφq_i = KV dn_i + z dden_i,   dKV = Σ_i φq_i dn_iᵀ,   dz = Σ_i φq_i
//   dden_i KV = Σ_j φk_j v_jᵀ:   dφk_j = dKV v_j + dz,        dv_j = dKVᵀ φk_j        (j < len)
// A non-null domega (laid out as omega) accumulates ∂ℓ/∂Ω += Σ_b ∂ℓ_b/∂Ω: each
// (sequence, head) writes its own block, summed over the sequences in a fixed order afterwards,
// so the result does not depend on the thread count.
template <class T>
void linear_attention_backward(T* dqkv, const T* dout, const T* out,
                               const LinearAttentionCache<T>& cache, const T* qkv, const T* omega,
                               const int* lengths, const AttentionLayout& a,
                               const FeatureMapSpec& spec, int m, T* scratch,
                               double* scratch_double, T* domega = nullptr) {
  const int L = a.length, hs = a.head_size;
  const int rows = particle_rows(spec, m, hs);
  const std::ptrdiff_t block = static_cast<std::ptrdiff_t>(rows) * hs;
  T* partial =
      domega ? particle_gradient_partials<T>(std::size_t(a.batch) * a.heads * block) : nullptr;
  const T scale = feature_input_scale<T>(spec, hs);
  const std::size_t per_thread = linear_attention_scratch(m, L, hs);
  const std::size_t per_thread_double = linear_attention_scratch_double(m, hs);
  ClaimedItems items(a.batch * a.heads, a.heads_per_claim(max_threads()));
#pragma omp parallel
  items.for_each([&](int bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    const int thread = omp_thread();
    T* work = scratch + per_thread * static_cast<std::size_t>(thread);
    double* work_double = scratch_double + per_thread_double * static_cast<std::size_t>(thread);
    const T* om = omega + static_cast<std::ptrdiff_t>(h) * rows * hs;
    T* dom = domega ? partial + bh * block : nullptr;
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto dq = a.block(dqkv, b, h, 0);
    auto dv = a.block(dqkv, b, h, a.v_offset());
    const auto o = a.output(out, b, h);
    const auto d_o = a.output(dout, b, h);
    ConstMatrixMap<T> fq(cache.phi_q + static_cast<std::ptrdiff_t>(bh) * m * L, m, L);
    ConstMatrixMap<T> fk(cache.phi_k + static_cast<std::ptrdiff_t>(bh) * m * L, m, L);
    Eigen::Map<const Matrix<double>> kv(cache.kv + static_cast<std::ptrdiff_t>(bh) * m * hs, m, hs);
    Eigen::Map<const Vector<double>> z(cache.z + static_cast<std::ptrdiff_t>(bh) * m, m);
    const T* inv = cache.inverse_denominator + static_cast<std::ptrdiff_t>(bh) * L;

    MatrixMap<T> dfq(work, m, L), dfk(work + std::size_t(m) * L, m, L);
    MatrixMap<T> dn(work + 2 * std::size_t(m) * L, hs, L);
    VectorMap<T> dden(dn.data() + std::size_t(hs) * L, L);
    T* small = dden.data() + L;
    const std::size_t mh = std::size_t(m) * hs;
    MatrixMap<T> kv_t(small, m, hs), dkv_t(small + mh, m, hs), dkv_tt(small + 2 * mh, hs, m);
    VectorMap<T> z_t(small + 3 * mh, m), dz_t(small + 3 * mh + m, m);
    T* ones = small + 3 * mh + 2 * std::size_t(m);
    T* chunk = ones + kSequenceChunk;  // m · d_head + m
    std::fill_n(ones, kSequenceChunk, T(1));
    Eigen::Map<Matrix<double>> dkv(work_double, m, hs);
    Eigen::Map<Vector<double>> dz(work_double + std::size_t(m) * hs, m);

    kv_t = kv.template cast<T>();
    z_t = z.template cast<T>();
    for (int i = 0; i < L; ++i) {
      dn.col(i) = d_o.col(i) * inv[i];                        // dn_i = dout_i / den_i
      dden[i] = -ordered_dot(d_o.col(i), o.col(i)) * inv[i];  // dden_i = −dout_i·out_i / den_i
    }
    multiply(dfq, kv_t, dn);                  // KV dn_i  (m, L)
    dfq.noalias() += z_t * dden.transpose();  // z dden_i
    dkv.setZero();
    dz.setZero();
    add_chunked_outer_products<T>(dkv, dz, fq.data(), dn.data(), hs, dden.data(), L, chunk,
                                  ones);  // Σ_i φq_i dn_iᵀ, Σ_i φq_i dden_i
    dkv_t = dkv.template cast<T>();
    dz_t = dz.template cast<T>();
    copy_transposed(dkv_tt.data(), hs, dkv_t.data(), m, m, hs);
    auto dfk_len = dfk.leftCols(len);
    multiply(dfk_len, dkv_t, v.leftCols(len));  // dKV v_j (m, len)
    dfk_len.colwise() += dz_t;
    multiply(dv.leftCols(len), dkv_tt, fk.leftCols(len), true);  // dKVᵀ φk_j (d_head, len)

    feature_map_backward(spec, dq, dfq.data(), fq.data(), q, om, m, scale, dom);
    StridedMap<T> dk(dqkv + a.column(b) * a.qkv_rows() + a.k_offset() + h * hs, hs, len,
                     Eigen::OuterStride<>(a.qkv_rows()));
    const T* phi_k = fk.data();
    if (spec.key_normalisation != KeyNormalisation::none) {  // dφ̃ → dφ; φ into dφq's place
      key_normalisation_backward(spec.key_normalisation, dfk.data(), fk.data(),
                                 cache.key_norm + static_cast<std::ptrdiff_t>(bh) * L, m, len,
                                 dfq.data());
      phi_k = dfq.data();
    }
    feature_map_backward(spec, dk, dfk.data(), phi_k,
                         ConstStridedMap<T>(k.data(), hs, len, Eigen::OuterStride<>(a.qkv_rows())),
                         om, m, scale, dom);
  });
  if (domega) add_particle_gradient_partials(domega, partial, a.batch, a.heads, block);
}

}  // namespace cpm
