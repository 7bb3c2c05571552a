#pragma once
// Affine layer y = W x + b over every token (llm.c's matmul_forward / matmul_backward).
#include "transformer/tensor_map.hpp"

namespace cpm {

// out (OC, N) = W (OC, C) · in (C, N) + b (OC); bias may be null.
template <class T>
void linear_forward(T* out, const T* in, const T* weight, const T* bias, int tokens, int c,
                    int oc) {
  ConstMatrixMap<T> w_t(weight, c, oc);  // Wᵀ, (C, OC)
  ConstMatrixMap<T> x(in, c, tokens);
  MatrixMap<T> y(out, oc, tokens);
  y.noalias() = w_t.transpose() * x;
  if (bias) y.colwise() += ConstVectorMap<T>(bias, oc);
}

// Differentiates `y = W x + b`:  din = Wᵀ dout (overwritten), dW += dout xᵀ, db += Σ_n dout.
template <class T>
void linear_backward(T* din, T* dweight, T* dbias, const T* dout, const T* in, const T* weight,
                     int tokens, int c, int oc) {
  ConstMatrixMap<T> w_t(weight, c, oc);
  ConstMatrixMap<T> x(in, c, tokens);
  ConstMatrixMap<T> dy(dout, oc, tokens);
  if (din) MatrixMap<T>(din, c, tokens).noalias() = w_t * dy;    // (C, OC)(OC, N)
  MatrixMap<T>(dweight, c, oc).noalias() += x * dy.transpose();  // (C, N)(N, OC)
  if (dbias) add_token_sums(dbias, dout, oc, tokens);
}

}  // namespace cpm
