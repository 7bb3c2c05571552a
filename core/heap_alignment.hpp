#pragma once
// Every heap block of a program linked with cpm starts on a kHeapAlignment-byte boundary
// (core/heap_alignment.cpp replaces the global operator new). Eigen's vectorised reductions and
// transcendental functions peel scalar iterations up to the first aligned element, so a sum or an
// exp over a std::vector's data rounds differently when the vector lands elsewhere modulo the
// SIMD width. Glibc's malloc aligns to 16 bytes only, and where a buffer lands depends on every
// allocation before it (the configuration text, the order of runs in a study): without this, two
// runs with the same seed could differ in the last bits and then, through training, in their
// results. With it, results depend on the seed and the shapes only.
#include <cstddef>

namespace cpm {

inline constexpr std::size_t kHeapAlignment = 64;  // one cache line, one AVX-512 register

// n elements of T rounded up to whole kHeapAlignment-byte blocks: the pieces a buffer is cut into
// in such sizes start on the boundary as the buffer does.
template <class T>
constexpr std::size_t whole_aligned_blocks(std::size_t n) {
  constexpr std::size_t per_block = kHeapAlignment / sizeof(T);
  return (n + per_block - 1) / per_block * per_block;
}

}  // namespace cpm
