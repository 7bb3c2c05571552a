#pragma once
// A sum in double whose order depends on the length alone (not on where the data lies, unlike
// Eigen's vectorised reductions, nor on the threads), and which the compiler vectorises: eight
// interleaved partial sums, combined in index order.
#include <cstddef>

namespace cpm {

// Σ_{j<n} term(j) in S: lane l of eight sums term(l), term(l + 8), …; then the lanes in order.
inline constexpr int kReductionLanes = 8;
template <class S, class Term>
S lane_sum(std::ptrdiff_t n, Term term) {
  S lane[kReductionLanes] = {};
  std::ptrdiff_t j = 0;
  for (; j + kReductionLanes <= n; j += kReductionLanes)
    for (int l = 0; l < kReductionLanes; ++l) lane[l] += term(j + l);
  for (int l = 0; j < n; ++j, ++l) lane[l] += term(j);
  S total(0);
  for (const S s : lane) total += s;
  return total;
}

// Σ_j f(x_j) in double, in the lanes of lane_sum.
template <class T, class F>
double interleaved_sum(const T* x, std::ptrdiff_t n, F f) {
  return lane_sum<double>(n, [&](std::ptrdiff_t j) { return f(static_cast<double>(x[j])); });
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
