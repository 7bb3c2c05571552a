#pragma once
// The fixed chunks of tokens (or of output rows) that the layers split their work into: each chunk
// is one task of a parallel loop and writes its own partial sums, which are then added in chunk
// order, so results depend on the token count alone, never on the threads.
#include <cstddef>
#include <utility>

namespace cpm {

inline constexpr int kTokenChunks = 8;

// [begin, begin + count) of chunk k of `tokens` items.
inline std::pair<int, int> token_chunk(int k, int tokens) {
  const int begin = static_cast<int>(static_cast<long>(tokens) * k / kTokenChunks);
  const int end = static_cast<int>(static_cast<long>(tokens) * (k + 1) / kTokenChunks);
  return {begin, end - begin};
}

// out[i] (+)= Σ_k partials[k · size + i] over the kTokenChunks chunks, in chunk order (onto out's
// values with `accumulate`, else overwriting them). A loop the team shares: called inside a
// parallel region it splits the entries over the threads, outside one it runs on the caller.
template <class T>
void sum_chunk_partials(T* out, const T* partials, std::size_t size, bool accumulate) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(size);
#pragma omp for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    T sum = accumulate ? out[i] : T(0);
    for (int k = 0; k < kTokenChunks; ++k) sum += partials[k * size + i];
    out[i] = sum;
  }
}

}  // namespace cpm
