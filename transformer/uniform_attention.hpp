#pragma once
// Uniform attention, the control with constant features φ ≡ 1: every query attends to every
// non-padding key with the same weight, so each head's output at every position is the mean of
// the sequence's values,
//   out_i = (1/len) Σ_{j<len} v_j,
// and queries and keys receive no gradient. This is linear attention with m = 1 and φ(x) = 1, and
// it is what attention reduces to when the feature map carries no information. The causal
// (decoder) control averages the prefix instead, out_i = (1/(i+1)) Σ_{j≤i} v_j.
#include <cstddef>

#include "transformer/attention_layout.hpp"
#include "transformer/tensor_map.hpp"

namespace cpm {

// out (C, N); qkv (qkv_rows, N); lengths (B).
template <class T>
void uniform_attention_forward(T* out, const T* qkv, const int* lengths, const AttentionLayout& a) {
  const int hs = a.head_size;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto o = a.output(out, b, h);
    for (int r = 0; r < hs; ++r) {  // no allocation: one channel at a time
      double sum = 0.0;
      for (int j = 0; j < len; ++j) sum += v(r, j);
      o.row(r).setConstant(static_cast<T>(sum / len));
    }
  }
}

// Differentiates the forward above: dv_j += (1/len) Σ_{i<L} dout_i for j < len. dqkv must be
// zeroed by the caller; the query and key rows stay zero.
template <class T>
void uniform_attention_backward(T* dqkv, const T* dout, const int* lengths,
                                const AttentionLayout& a) {
  const int L = a.length, hs = a.head_size;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads, len = lengths[b];
    const auto d_o = a.output(dout, b, h);
    auto dv = a.block(dqkv, b, h, a.v_offset());
    for (int r = 0; r < hs; ++r) {
      double total = 0.0;
      for (int i = 0; i < L; ++i) total += d_o(r, i);
      dv.row(r).leftCols(len).array() += static_cast<T>(total / len);
    }
  }
}

// out (C, N) = prefix means of the values; qkv (qkv_rows, N); every sequence has length L.
template <class T>
void causal_uniform_attention_forward(T* out, const T* qkv, const AttentionLayout& a) {
  const int L = a.length, hs = a.head_size;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads;
    const auto v = a.block(qkv, b, h, a.v_offset());
    auto o = a.output(out, b, h);
    for (int r = 0; r < hs; ++r) {
      double sum = 0.0;
      for (int i = 0; i < L; ++i) {
        sum += v(r, i);
        o(r, i) = static_cast<T>(sum / (i + 1));
      }
    }
  }
}

// Differentiates the forward above: dv_j += Σ_{i≥j} dout_i / (i+1), a suffix sum. dqkv must be
// zeroed by the caller; the query and key rows stay zero.
template <class T>
void causal_uniform_attention_backward(T* dqkv, const T* dout, const AttentionLayout& a) {
  const int L = a.length, hs = a.head_size;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < a.batch * a.heads; ++bh) {
    const int b = bh / a.heads, h = bh % a.heads;
    const auto d_o = a.output(dout, b, h);
    auto dv = a.block(dqkv, b, h, a.v_offset());
    for (int r = 0; r < hs; ++r) {
      double suffix = 0.0;
      for (int j = L - 1; j >= 0; --j) {
        suffix += d_o(r, j) / (j + 1.0);
        dv(r, j) += static_cast<T>(suffix);
      }
    }
  }
}

}  // namespace cpm
