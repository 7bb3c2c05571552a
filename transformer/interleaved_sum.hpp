#pragma once
// A sum in double whose order depends on the length alone (not on where the data lies, unlike
// Eigen's vectorised reductions, nor on the threads), and which the compiler vectorises: eight
// interleaved partial sums, combined in index order.
#include <cstddef>

namespace cpm {

// Σ_j f(x_j) in double: lane l of eight sums f(x_l), f(x_{l+8}), …; then the lanes in order.
template <class T, class F>
double interleaved_sum(const T* x, std::ptrdiff_t n, F f) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::ptrdiff_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lane[l] += f(static_cast<double>(x[j + l]));
  for (int l = 0; j < n; ++j, ++l) lane[l] += f(static_cast<double>(x[j]));
  double total = 0.0;
  for (const double s : lane) total += s;
  return total;
}

// The same over kSumChunks fixed chunks of the indices, in parallel for long arrays: each chunk an
// interleaved_sum, the chunks' sums added in order, so the order still depends on n alone.
inline constexpr int kSumChunks = 16;
template <class T, class F>
double chunked_sum(const T* x, std::ptrdiff_t n, F f) {
  double chunk[kSumChunks];
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int k = 0; k < kSumChunks; ++k) {
    const std::ptrdiff_t begin = n * k / kSumChunks, end = n * (k + 1) / kSumChunks;
    chunk[k] = interleaved_sum(x + begin, end - begin, f);
  }
  double total = 0.0;
  for (const double s : chunk) total += s;
  return total;
}
template <class T>
double interleaved_sum(const T* x, std::ptrdiff_t n) {
  return interleaved_sum(x, n, [](double v) { return v; });
}

}  // namespace cpm
