#pragma once
// Exact softmax attention, the baseline and the test reference:
//   out_i = Σ_{j<len} p_ij v_j,   p_ij = exp(s_ij − lse_i),   s_ij = q_iᵀk_j / √d_head.
// Queries are processed in blocks of kQueryBlock rows; only a (block × L) tile of scores exists at
// a time, and the backward pass recomputes it from the stored log-sum-exp (as FlashAttention), so
// memory stays O(L) per head. Keys at padding positions are excluded. With `causal` (decoder
// attention) query i sees only the keys j ≤ i: a query block starting at i0 reads the keys
// [0, i0 + rows), and within it the entries j > i are excluded.
// The products run through transformer/matrix_product.hpp, whose left operand is column-major:
// each head's keys (and, backward, values) are first copied transposed, (L, d_head), the keys
// times 1/√d_head. A row-major (rows, keys) tile is the column-major (keys, rows) matrix of its
// transpose, e.g. sᵀ = (k/√d)ᵀ q.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "transformer/attention_layout.hpp"
#include "transformer/matrix_product.hpp"
#include "transformer/shifted_exponential.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

inline constexpr int kQueryBlock = 64;

// Per-thread scratch of the softmax attention, in elements of T.
inline std::size_t softmax_attention_scratch(int length, int head_size) {
  return per_thread_block(2 * std::size_t(kQueryBlock) * length + 2 * kQueryBlock +
                          2 * std::size_t(length) * head_size);
}

// How many keys query i attends to: j < len, and j ≤ i if causal.
inline int attended_keys(int len, int i, bool causal) {
  return causal ? std::min(len, i + 1) : len;
}

// out (C, N); lse (B·H·L) log-sum-exp of each query row.
template <class T>
void softmax_attention_forward(T* out, T* lse, const T* qkv, const int* lengths,
                               const AttentionLayout& a, T* scratch, bool causal = false) {
  const int L = a.length, hs = a.head_size;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t per_thread = softmax_attention_scratch(L, hs);
#pragma omp parallel for schedule(dynamic, a.heads_per_claim(max_threads()))
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    T* k_t = work + 2 * std::size_t(kQueryBlock) * L;  // (L, d_head)
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset());
    copy_transposed(k_t, L, k.data(), k.outerStride(), hs, L, scale);
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto o = a.output(out, b, h);
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0);
      const int keys = attended_keys(len, i0 + rows - 1, causal);
      RowMatrixMap<T> s(work, rows, keys);
      multiply(work, keys, k_t, L, q.col(i0).data(), 1, q.outerStride(), keys, rows, hs,
               false);  // sᵀ (keys, rows)
      for (int r = 0; r < rows; ++r) {
        const int n = attended_keys(len, i0 + r, causal);
        T* row = s.row(r).data();
        const T shift = maximum_value(row, n);  // constant in backward (shift-invariant)
        const double total = shifted_exponential(row, row, n, shift);
        const T inverse = static_cast<T>(1.0 / total);
        for (int j = 0; j < n; ++j) row[j] *= inverse;
        std::fill(row + n, row + keys, T(0));
        lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r] = static_cast<T>(shift + std::log(total));
      }
      multiply(o.middleCols(i0, rows), v.leftCols(keys),
               ConstMatrixMap<T>(work, keys, rows));  // v sᵀ (d_head, rows)
    }
  }
}

// Differentiates the forward above; dqkv must be zeroed by the caller (q and k may share rows).
//   D_i = dout_i·out_i,  dv_j += Σ_i p_ij dout_i,  dp_ij = dout_i·v_j,  ds_ij = p_ij (dp_ij − D_i),
//   dq_i += Σ_j ds_ij k_j / √d,  dk_j += Σ_i ds_ij q_i / √d.
template <class T>
void softmax_attention_backward(T* dqkv, const T* dout, const T* out, const T* lse, const T* qkv,
                                const int* lengths, const AttentionLayout& a, T* scratch,
                                bool causal = false) {
  const int L = a.length, hs = a.head_size;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t per_thread = softmax_attention_scratch(L, hs);
#pragma omp parallel for schedule(dynamic, a.heads_per_claim(max_threads()))
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    T* k_t = work + 2 * std::size_t(kQueryBlock) * L;  // (L, d_head) each
    T* v_t = k_t + std::size_t(L) * hs;
    const auto q = a.block(qkv, b, h, 0);
    const auto k_all = a.block(qkv, b, h, a.k_offset());
    const auto v_all = a.block(qkv, b, h, a.v_offset());
    copy_transposed(k_t, L, k_all.data(), k_all.outerStride(), hs, L, scale);
    copy_transposed(v_t, L, v_all.data(), v_all.outerStride(), hs, L);
    auto dq = a.block(dqkv, b, h, 0);
    auto dk_all = a.block(dqkv, b, h, a.k_offset());
    auto dv_all = a.block(dqkv, b, h, a.v_offset());
    const auto o = a.output(out, b, h);
    const auto d_o = a.output(dout, b, h);
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0);
      const int keys = attended_keys(len, i0 + rows - 1, causal);
      const auto k = k_all.leftCols(keys);
      auto dk = dk_all.leftCols(keys);
      auto dv = dv_all.leftCols(keys);
      const auto d_o_block = d_o.middleCols(i0, rows);
      RowMatrixMap<T> p(work, rows, keys), ds(work + std::size_t(rows) * keys, rows, keys);
      multiply(p.data(), keys, k_t, L, q.col(i0).data(), 1, q.outerStride(), keys, rows, hs,
               false);  // recompute sᵀ (keys, rows)
      for (int r = 0; r < rows; ++r) {
        const int n = attended_keys(len, i0 + r, causal);
        T* row = p.row(r).data();
        shifted_exponential(row, row, n, lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r]);
        std::fill(row + n, row + keys, T(0));
      }
      multiply_transposed(dv, d_o_block, ConstMatrixMap<T>(p.data(), keys, rows),
                          true);  // (d_head, rows)(rows, keys)
      multiply(ds.data(), keys, v_t, L, d_o_block.data(), 1, d_o.outerStride(), keys, rows, hs,
               false);                  // dpᵀ (keys, rows)
      for (int r = 0; r < rows; ++r) {  // ds/√d, 0 where p is 0
        const T d = ordered_dot(d_o.col(i0 + r), o.col(i0 + r));
        ds.row(r).array() = scale * (p.row(r).array() * (ds.row(r).array() - d));
      }
      const ConstMatrixMap<T> ds_t(ds.data(), keys, rows);
      multiply(dq.middleCols(i0, rows), k, ds_t, true);             // (d_head, keys)(keys, rows)
      multiply_transposed(dk, q.middleCols(i0, rows), ds_t, true);  // (d_head, rows)(rows, keys)
    }
  }
}

}  // namespace cpm
