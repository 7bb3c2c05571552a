#pragma once
// Depthwise causal convolution over the positions of each sequence, the short convolution of
// BaseConv (Zoology, Arora et al. 2023): per channel c a kernel of k taps and a bias,
//   out[c, t] = b_c + Σ_{j=0}^{k−1} w[c, j] · in[c, t + j − (k−1)],
// with in = 0 before the start of the sequence. It is PyTorch's
// nn.Conv1d(C, C, k, groups=C, padding=k−1) followed by keeping the first L outputs; the weight
// (C, k) row-major is Conv1d's (C, 1, k) weight with the middle axis dropped.
//
// Every channel is independent, and every output entry is computed by one thread in a fixed
// order, so results do not depend on the number of threads. Threads start only when a call holds
// enough work: the convolution costs a few multiply-adds per entry, less than an OpenMP barrier
// on a busy machine for small batches.
#include <algorithm>
#include <array>
#include <cstddef>

namespace cpm {

inline constexpr double kShortConvolutionParallelWork = 1 << 20;  // multiply-adds per call

inline bool short_convolution_parallel(int batch, int length, int c, int k) {
  return double(batch) * length * c * k >= kShortConvolutionParallelWork;
}

// out, in (C, N), N = B·L tokens ordered (batch, position); weight (C, k) row-major; bias (C).
template <class T>
void short_convolution_forward(T* out, const T* in, const T* weight, const T* bias, int batch,
                               int length, int c, int k) {
  const int tokens = batch * length;
#pragma omp parallel for schedule(static) if (short_convolution_parallel(batch, length, c, k))
  for (int n = 0; n < tokens; ++n) {
    const int t = n % length;
    T* y = out + static_cast<std::ptrdiff_t>(n) * c;
    std::copy_n(bias, c, y);
    // Tap j reads position t + j − (k−1), which must be ≥ 0: j ≥ k − 1 − t.
    for (int j = std::max(0, k - 1 - t); j < k; ++j) {
      const T* x = in + static_cast<std::ptrdiff_t>(n + j - (k - 1)) * c;
      for (int i = 0; i < c; ++i) y[i] += weight[static_cast<std::ptrdiff_t>(i) * k + j] * x[i];
    }
  }
}

// Differentiates `out[c, t] = b_c + Σ_j w[c, j] · in[c, t + j − (k−1)]`:
//   din[c, s]  += Σ_j w[c, j] · dout[c, s − j + (k−1)]   (positions s − j + (k−1) < L),
//   dw[c, j]   += Σ_{b, t} dout[c, t] · in[c, t + j − (k−1)],
//   db[c]      += Σ_{b, t} dout[c, t].
// Adds to din, dweight and dbias. The parameter gradients are sums over tokens in double, in
// blocks of 16 channels with the tokens inner (as layer_norm_backward), one block and tap per
// work item.
template <class T>
void short_convolution_backward(T* din, T* dweight, T* dbias, const T* dout, const T* in,
                                const T* weight, int batch, int length, int c, int k) {
  constexpr int kBlock = 16;
  const int tokens = batch * length, blocks = (c + kBlock - 1) / kBlock;
  const int items = blocks * (k + 1);  // taps 0 … k−1, then the bias
#pragma omp parallel if (short_convolution_parallel(batch, length, c, k))
  {
#pragma omp for schedule(static)
    for (int n = 0; n < tokens; ++n) {
      const int s = n % length;
      T* dx = din + static_cast<std::ptrdiff_t>(n) * c;
      // Output t = s − j + (k−1) < L: j > s + k − 1 − L.
      for (int j = std::max(0, s + k - length); j < k; ++j) {
        const T* dy = dout + static_cast<std::ptrdiff_t>(n - j + (k - 1)) * c;
        for (int i = 0; i < c; ++i) dx[i] += weight[static_cast<std::ptrdiff_t>(i) * k + j] * dy[i];
      }
    }
#pragma omp for schedule(static)
    for (int item = 0; item < items; ++item) {
      const int i0 = item / (k + 1) * kBlock, j = item % (k + 1);
      const int width = std::min(kBlock, c - i0);
      std::array<double, kBlock> acc{};
      for (int b = 0; b < batch; ++b) {
        const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(b) * length;
        if (j == k) {
          for (int t = 0; t < length; ++t) {
            const T* dy = dout + (first + t) * c + i0;
            for (int i = 0; i < width; ++i) acc[i] += dy[i];
          }
          continue;
        }
        for (int t = std::max(0, k - 1 - j); t < length; ++t) {
          const T* dy = dout + (first + t) * c + i0;
          const T* x = in + (first + t + j - (k - 1)) * c + i0;
          for (int i = 0; i < width; ++i) acc[i] += static_cast<double>(dy[i]) * x[i];
        }
      }
      for (int i = 0; i < width; ++i) {
        if (j == k)
          dbias[i0 + i] += static_cast<T>(acc[i]);
        else
          dweight[static_cast<std::ptrdiff_t>(i0 + i) * k + j] += static_cast<T>(acc[i]);
      }
    }
  }
}

}  // namespace cpm
