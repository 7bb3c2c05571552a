#pragma once
// Exact softmax attention, the baseline and the test reference:
//   out_i = Σ_{j<len} p_ij v_j,   p_ij = exp(s_ij − lse_i),   s_ij = q_iᵀk_j / √d_head.
// Queries are processed in blocks of kQueryBlock rows; only a (block × L) tile of scores exists at
// a time, and the backward pass recomputes it from the stored log-sum-exp (as FlashAttention), so
// memory stays O(L) per head. Keys at padding positions are excluded.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "transformer/attention_layout.hpp"
#include "transformer/thread_index.hpp"

namespace cpm {

inline constexpr int kQueryBlock = 64;

// Per-thread scratch of the softmax attention, in elements of T.
inline std::size_t softmax_attention_scratch(int length) {
  return 2 * std::size_t(kQueryBlock) * length + 2 * kQueryBlock;
}

// out (C, N); lse (B·H·L) log-sum-exp of each query row.
template <class T>
void softmax_attention_forward(T* out, T* lse, const T* qkv, const int* lengths,
                               const AttentionLayout& a, T* scratch) {
  const int L = a.length, hs = a.head_size;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t per_thread = softmax_attention_scratch(L);
#pragma omp parallel for schedule(dynamic)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset()).leftCols(len);
    const auto v = a.block(qkv, b, h, a.v_offset()).leftCols(len);
    auto o = a.output(out, b, h);
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0);
      MatrixMap<T> s(work, rows, len);
      s.noalias() = scale * (q.middleCols(i0, rows).transpose() * k);  // (rows, len)
      for (int r = 0; r < rows; ++r) {
        const T shift = s.row(r).maxCoeff();  // constant in backward: softmax is shift-invariant
        s.row(r).array() = (s.row(r).array() - shift).exp();
        double total = 0.0;
        for (int j = 0; j < len; ++j) total += s(r, j);
        s.row(r) /= static_cast<T>(total);
        lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r] = static_cast<T>(shift + std::log(total));
      }
      o.middleCols(i0, rows).noalias() = v * s.transpose();  // (d_head, len)(len, rows)
    }
  }
}

// Differentiates the forward above; dqkv must be zeroed by the caller (q and k may share rows).
//   D_i = dout_i·out_i,  dv_j += Σ_i p_ij dout_i,  dp_ij = dout_i·v_j,  ds_ij = p_ij (dp_ij − D_i),
//   dq_i += Σ_j ds_ij k_j / √d,  dk_j += Σ_i ds_ij q_i / √d.
template <class T>
void softmax_attention_backward(T* dqkv, const T* dout, const T* out, const T* lse, const T* qkv,
                                const int* lengths, const AttentionLayout& a, T* scratch) {
  const int L = a.length, hs = a.head_size;
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hs)));
  const std::size_t per_thread = softmax_attention_scratch(L);
#pragma omp parallel for schedule(dynamic)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    T* work = scratch + per_thread * static_cast<std::size_t>(omp_thread());
    const auto q = a.block(qkv, b, h, 0);
    const auto k = a.block(qkv, b, h, a.k_offset()).leftCols(len);
    const auto v = a.block(qkv, b, h, a.v_offset()).leftCols(len);
    auto dq = a.block(dqkv, b, h, 0);
    auto dk = a.block(dqkv, b, h, a.k_offset()).leftCols(len);
    auto dv = a.block(dqkv, b, h, a.v_offset()).leftCols(len);
    const auto o = a.output(out, b, h);
    const auto d_o = a.output(dout, b, h);
    for (int i0 = 0; i0 < L; i0 += kQueryBlock) {
      const int rows = std::min(kQueryBlock, L - i0);
      MatrixMap<T> p(work, rows, len), ds(work + std::size_t(rows) * len, rows, len);
      p.noalias() = scale * (q.middleCols(i0, rows).transpose() * k);  // recompute s (rows, len)
      for (int r = 0; r < rows; ++r)
        p.row(r).array() =
            (p.row(r).array() - lse[static_cast<std::ptrdiff_t>(bh) * L + i0 + r]).exp();
      dv.noalias() += d_o.middleCols(i0, rows) * p;             // (d_head, rows)(rows, len)
      ds.noalias() = d_o.middleCols(i0, rows).transpose() * v;  // dp (rows, len)
      for (int r = 0; r < rows; ++r) {
        const T d = d_o.col(i0 + r).dot(o.col(i0 + r));
        ds.row(r).array() = p.row(r).array() * (ds.row(r).array() - d);
      }
      dq.middleCols(i0, rows).noalias() +=
          scale * (k * ds.transpose());                       // (d_head, len)(len, rows)
      dk.noalias() += scale * (q.middleCols(i0, rows) * ds);  // (d_head, rows)(rows, len)
    }
  }
}

}  // namespace cpm
