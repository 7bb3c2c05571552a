#pragma once
// GELU, tanh approximation (PyTorch's approximate="tanh"):
//   gelu(x) = x/2 (1 + tanh(u)),  u = √(2/π) (x + 0.044715 x³).
#include <cmath>
#include <cstddef>

namespace cpm {

inline constexpr double kGeluScale = 0.7978845608028654;  // √(2/π)

template <class T>
void gelu_forward(T* out, const T* in, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const T x = in[i];
    const T u = T(kGeluScale) * (x + T(0.044715) * x * x * x);
    out[i] = T(0.5) * x * (T(1) + std::tanh(u));
  }
}

// Differentiates `out = x/2 (1 + tanh(u))`:
//   d out/dx = (1 + tanh u)/2 + x/2 sech²(u) √(2/π)(1 + 3·0.044715 x²).  din = that · dout.
template <class T>
void gelu_backward(T* din, const T* in, const T* dout, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const T x = in[i];
    const T u = T(kGeluScale) * (x + T(0.044715) * x * x * x);
    const T t = std::tanh(u);
    const T du = T(kGeluScale) * (T(1) + T(3 * 0.044715) * x * x);
    din[i] = (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du) * dout[i];
  }
}

}  // namespace cpm
