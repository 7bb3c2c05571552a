#pragma once
// The gradient with respect to the particles (trainable particles) in the attention backward
// passes: every (sequence, head) writes its own block of ∂ℓ_b/∂Ω, and the blocks are summed over
// the sequences in a fixed order, so the result does not depend on the thread count.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace cpm {

// n zeroed elements for the per-(sequence, head) blocks. The buffer belongs to the calling thread
// and only grows: after the first step of a training run nothing is allocated.
template <class T>
T* particle_gradient_partials(std::size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  std::fill_n(buffer.begin(), n, T(0));
  return buffer.data();
}

// domega (heads, block) += Σ_b partial (batch, heads, block), b in order, in double.
template <class T>
void add_particle_gradient_partials(T* domega, const T* partial, int batch, int heads,
                                    std::ptrdiff_t block) {
  const std::ptrdiff_t entries = static_cast<std::ptrdiff_t>(heads) * block;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t e = 0; e < entries; ++e) {  // e = h·block + i
    const std::ptrdiff_t h = e / block, i = e % block;
    double sum = 0.0;
    for (int b = 0; b < batch; ++b) sum += partial[(b * heads + h) * block + i];
    domega[e] += static_cast<T>(sum);
  }
}

}  // namespace cpm
