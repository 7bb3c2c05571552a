#pragma once
// LayerNorm over the channels of each token, y = (x − μ) σ⁻¹ w + b with σ = √(var + 1e-5)
// (biased variance, as PyTorch). The cache keeps μ and 1/σ per token.
#include <algorithm>
#include <array>
#include <cmath>

#include "transformer/interleaved_sum.hpp"
#include "transformer/tensor_map.hpp"
#include "transformer/token_chunks.hpp"

namespace cpm {

inline constexpr double kLayerNormEpsilon = 1e-5;

// out, in (C, N); mean, rstd (N). Tokens go in blocks of kStatisticsBlock: their sums are
// independent chains the core overlaps, and their square roots and divisions one vector operation,
// instead of one token's chain of sum, square root and division after another.
inline constexpr int kStatisticsBlock = 8;
template <class T>
void layer_norm_forward(T* out, T* mean, T* rstd, const T* in, const T* weight, const T* bias,
                        int tokens, int c) {
  const int blocks = (tokens + kStatisticsBlock - 1) / kStatisticsBlock;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < blocks; ++k) {
    const int n0 = k * kStatisticsBlock, count = std::min(kStatisticsBlock, tokens - n0);
    const auto token = [&](auto* x, int t) { return x + static_cast<std::ptrdiff_t>(n0 + t) * c; };
    double mu[kStatisticsBlock] = {}, s2[kStatisticsBlock] = {}, r[kStatisticsBlock];
    for (int t = 0; t < count; ++t) mu[t] = interleaved_sum(token(in, t), c) / c;
    for (int t = 0; t < count; ++t) {
      const double m = mu[t];
      s2[t] = interleaved_sum(token(in, t), c, [&](double v) { return (v - m) * (v - m); });
    }
    for (int t = 0; t < kStatisticsBlock; ++t)
      r[t] = 1.0 / std::sqrt(s2[t] / c + kLayerNormEpsilon);
    for (int t = 0; t < count; ++t) {
      const T* x = token(in, t);
      T* y = token(out, t);
      for (int i = 0; i < c; ++i)
        y[i] = static_cast<T>((x[i] - mu[t]) * r[t]) * weight[i] + bias[i];
      mean[n0 + t] = static_cast<T>(mu[t]);
      rstd[n0 + t] = static_cast<T>(r[t]);
    }
  }
}

// Scratch of the backward pass: each chunk's partial dw and db, in elements of T.
inline std::size_t layer_norm_backward_scratch(int c) {
  return 2 * static_cast<std::size_t>(kTokenChunks) * c;
}

// Differentiates `y = (x − μ) r w + b`:
//   x̂ = (x − μ) r,  g = w ⊙ dy,  din += r (g − mean(g) − x̂ mean(g ⊙ x̂)),
//   dw += Σ_n dy ⊙ x̂,  db += Σ_n dy.
// One parallel region: each fixed chunk of tokens (transformer/token_chunks.hpp) writes din of its
// tokens and, while they are in cache, its partial dw and db (sums over its tokens in double,
// blocks of 16 channels with the tokens inner), and the partials are added in chunk order.
// `scratch` holds layer_norm_backward_scratch(c) elements.
template <class T>
void layer_norm_backward(T* din, T* dweight, T* dbias, const T* dout, const T* in, const T* weight,
                         const T* mean, const T* rstd, int tokens, int c, T* scratch) {
  constexpr int kBlock = 16;
  T* dw_partials = scratch;
  T* db_partials = scratch + static_cast<std::ptrdiff_t>(kTokenChunks) * c;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int k = 0; k < kTokenChunks; ++k) {
      const auto [begin, count] = token_chunk(k, tokens);
      for (int n = begin; n < begin + count; ++n) {
        const T* x = in + static_cast<std::ptrdiff_t>(n) * c;
        const T* dy = dout + static_cast<std::ptrdiff_t>(n) * c;
        T* dx = din + static_cast<std::ptrdiff_t>(n) * c;
        const auto xhat = [&](std::ptrdiff_t i) { return (x[i] - mean[n]) * rstd[n]; };
        const auto g = [&](std::ptrdiff_t i) { return static_cast<double>(weight[i]) * dy[i]; };
        const double g_mean = lane_sum<double>(c, g) / c;
        const double gx_mean =
            lane_sum<double>(c, [&](std::ptrdiff_t i) { return g(i) * xhat(i); }) / c;
        for (int i = 0; i < c; ++i)
          dx[i] += static_cast<T>(rstd[n] * (g(i) - g_mean - xhat(i) * gx_mean));
      }
      T* dw = dw_partials + static_cast<std::ptrdiff_t>(k) * c;
      T* db = db_partials + static_cast<std::ptrdiff_t>(k) * c;
      for (int i0 = 0; i0 < c; i0 += kBlock) {
        const int width = std::min(kBlock, c - i0);
        std::array<double, kBlock> sw{}, sb{};
        for (int n = begin; n < begin + count; ++n) {
          const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(n) * c + i0;
          const double mu = mean[n], r = rstd[n];
          for (int i = 0; i < width; ++i) {
            sw[i] += static_cast<double>(dout[at + i]) * ((in[at + i] - mu) * r);
            sb[i] += dout[at + i];
          }
        }
        for (int i = 0; i < width; ++i) {
          dw[i0 + i] = static_cast<T>(sw[i]);
          db[i0 + i] = static_cast<T>(sb[i]);
        }
      }
    }
    sum_chunk_partials(dweight, dw_partials, c, true);
    sum_chunk_partials(dbias, db_partials, c, true);
  }
}

}  // namespace cpm
