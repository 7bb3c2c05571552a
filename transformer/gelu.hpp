#pragma once
// GELU, tanh approximation (PyTorch's approximate="tanh"):
//   gelu(x) = x/2 (1 + tanh(u)),  u = √(2/π) (x + 0.044715 x³).
// Eigen's vectorised tanh over 8 fixed chunks of the array, in parallel.
#include <cstddef>

#include "transformer/tensor_map.hpp"

namespace cpm {

inline constexpr double kGeluScale = 0.7978845608028654;  // √(2/π)
inline constexpr int kGeluChunks = 8;

template <class T>
void gelu_forward(T* out, const T* in, std::ptrdiff_t count) {
#pragma omp parallel for schedule(static)
  for (int k = 0; k < kGeluChunks; ++k) {
    const std::ptrdiff_t begin = count * k / kGeluChunks, n = count * (k + 1) / kGeluChunks - begin;
    const auto x = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(in + begin, n);
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(out + begin, n) =
        T(0.5) * x * (T(1) + (T(kGeluScale) * (x + T(0.044715) * x.cube())).tanh());
  }
}

// Differentiates `out = x/2 (1 + tanh(u))`:
//   d out/dx = (1 + tanh u)/2 + x/2 sech²(u) √(2/π)(1 + 3·0.044715 x²).  din = that · dout.
template <class T>
void gelu_backward(T* din, const T* in, const T* dout, std::ptrdiff_t count) {
#pragma omp parallel for schedule(static)
  for (int k = 0; k < kGeluChunks; ++k) {
    const std::ptrdiff_t begin = count * k / kGeluChunks, n = count * (k + 1) / kGeluChunks - begin;
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    const auto x = Eigen::Map<const Array>(in + begin, n);
    const auto dy = Eigen::Map<const Array>(dout + begin, n);
    const auto t = (T(kGeluScale) * (x + T(0.044715) * x.cube())).tanh();
    const auto du = T(kGeluScale) * (T(1) + T(3 * 0.044715) * x.square());
    Eigen::Map<Array>(din + begin, n) =
        (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t.square()) * du) * dy;
  }
}

}  // namespace cpm
