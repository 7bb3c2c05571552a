#pragma once
// LayerNorm over the channels of each token, y = (x − μ) σ⁻¹ w + b with σ = √(var + 1e-5)
// (biased variance, as PyTorch). The cache keeps μ and 1/σ per token.
// A token's statistics are sums over its C channels in T, in vector registers of T (as PyTorch
// forms them in float): one register of partial sums over full registers from the first channel,
// then the lanes, then the last C mod width channels one by one. The order depends on C and the
// instruction set alone, never on the threads. (In double, with a token's channels widened, the
// layer took longer: 30 against 17 ns per token of 64 channels forward, one thread.)
#include <algorithm>
#include <array>
#include <cmath>

#include "transformer/register_reductions.hpp"
#include "transformer/tensor_map.hpp"
#include "transformer/token_chunks.hpp"

namespace cpm {

inline constexpr double kLayerNormEpsilon = 1e-5;

// out, in (C, N); mean, rstd (N).
template <class T>
void layer_norm_forward(T* out, T* mean, T* rstd, const T* in, const T* weight, const T* bias,
                        int tokens, int c) {
  using Batch = xsimd::batch<T>;
  constexpr int width = Batch::size;
  const int full = c / width * width;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < tokens; ++n) {
    const T* x = in + static_cast<std::ptrdiff_t>(n) * c;
    T* y = out + static_cast<std::ptrdiff_t>(n) * c;
    Batch sum(T(0));
    for (int i = 0; i < full; i += width) sum += Batch::load_unaligned(x + i);
    T total = xsimd::hadd(sum);
    for (int i = full; i < c; ++i) total += x[i];
    const T mu = total / static_cast<T>(c);
    const Batch m(mu);
    Batch squares(T(0));
    for (int i = 0; i < full; i += width) {
      const Batch d = Batch::load_unaligned(x + i) - m;
      squares = xsimd::fma(d, d, squares);
    }
    T s2 = xsimd::hadd(squares);
    for (int i = full; i < c; ++i) s2 += (x[i] - mu) * (x[i] - mu);
    const T r = T(1) / std::sqrt(s2 / static_cast<T>(c) + static_cast<T>(kLayerNormEpsilon));
    const Batch rr(r);
    for (int i = 0; i < full; i += width)
      ((Batch::load_unaligned(x + i) - m) * rr * Batch::load_unaligned(weight + i) +
       Batch::load_unaligned(bias + i))
          .store_unaligned(y + i);
    for (int i = full; i < c; ++i) y[i] = (x[i] - mu) * r * weight[i] + bias[i];
    mean[n] = mu;
    rstd[n] = r;
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
      using Batch = xsimd::batch<T>;
      constexpr int width = Batch::size;
      const int full = c / width * width;
      for (int n = begin; n < begin + count; ++n) {
        const T* x = in + static_cast<std::ptrdiff_t>(n) * c;
        const T* dy = dout + static_cast<std::ptrdiff_t>(n) * c;
        T* dx = din + static_cast<std::ptrdiff_t>(n) * c;
        const T mu = mean[n], r = rstd[n];
        const Batch m(mu), rr(r);
        const auto g = [&](int i) {
          return Batch::load_unaligned(weight + i) * Batch::load_unaligned(dy + i);
        };
        const auto xhat = [&](int i) { return (Batch::load_unaligned(x + i) - m) * rr; };
        Batch g_sums(T(0)), gx_sums(T(0));
        for (int i = 0; i < full; i += width) {
          const Batch gi = g(i);
          g_sums += gi;
          gx_sums = xsimd::fma(gi, xhat(i), gx_sums);
        }
        T g_sum = xsimd::hadd(g_sums), gx_sum = xsimd::hadd(gx_sums);
        for (int i = full; i < c; ++i) {
          g_sum += weight[i] * dy[i];
          gx_sum += weight[i] * dy[i] * ((x[i] - mu) * r);
        }
        const T g_mean = g_sum / static_cast<T>(c), gx_mean = gx_sum / static_cast<T>(c);
        const Batch gm(g_mean), gxm(gx_mean);
        for (int i = 0; i < full; i += width)
          (Batch::load_unaligned(dx + i) + rr * (g(i) - gm - xhat(i) * gxm))
              .store_unaligned(dx + i);
        for (int i = full; i < c; ++i)
          dx[i] += r * (weight[i] * dy[i] - g_mean - (x[i] - mu) * r * gx_mean);
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
