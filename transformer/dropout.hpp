#pragma once
// Inverted dropout: each entry is kept with probability 1 − p and scaled by 1/(1 − p). The mask of
// a training step is a pure function of (seed, site, step, token), so it does not depend on the
// thread count; it is stored (as the multiplier 0 or 1/(1 − p)) for the backward pass. Each token
// takes one 64-bit key from its Philox stream and expands it with SplitMix64 into its C draws
// (dropout needs no more than that, and one Philox call per entry would cost more than the layer).
#include <cstddef>
#include <cstdint>

#include "core/random_stream.hpp"

namespace cpm {

// Fills mask (C, N) for one dropout site; p = 0 gives all ones.
template <class T>
void dropout_mask(T* mask, double p, std::uint64_t seed, std::uint64_t site, std::uint64_t step,
                  int tokens, int c) {
  const T keep_scale = p > 0.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(1);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < tokens; ++n) {
    T* m = mask + static_cast<std::ptrdiff_t>(n) * c;
    if (p <= 0.0) {
      for (int i = 0; i < c; ++i) m[i] = T(1);
      continue;
    }
    RandomStream stream(seed, RandomPurpose::dropout, site, static_cast<std::uint64_t>(n), step);
    std::uint64_t state = static_cast<std::uint64_t>(stream.uniform() * 9007199254740992.0);
    const auto threshold = static_cast<std::uint64_t>(p * 4294967296.0);
    for (int i = 0; i < c; ++i) {
      std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);  // SplitMix64
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      z ^= z >> 31;
      m[i] = (z >> 32) < threshold ? T(0) : keep_scale;
    }
  }
}

// out = in ⊙ mask (in place allowed).
template <class T>
void dropout_forward(T* out, const T* in, const T* mask, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = in[i] * mask[i];
}

// Differentiates `out = in ⊙ mask`: din = dout ⊙ mask (in place allowed).
template <class T>
void dropout_backward(T* din, const T* dout, const T* mask, std::ptrdiff_t count) {
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) din[i] = dout[i] * mask[i];
}

}  // namespace cpm
