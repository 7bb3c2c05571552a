#pragma once
// Memory for activations and scratch that starts on a cache line, handed out in whole lines.
// The head blocks of q | k | v and of the attention output are 16 floats, one line each when the
// buffer is aligned; with the 16-byte alignment of std::vector every block straddles two lines,
// each shared with a neighbouring head, and the threads that work on neighbouring heads keep
// taking those lines from each other (docs/parallelism.md §3).
#include <cstddef>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

namespace cpm {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
using AlignedBuffer = std::vector<T, xsimd::aligned_allocator<T, kCacheLineBytes>>;

// n elements of T rounded up to whole cache lines, so that the next piece of a buffer starts on
// one.
template <class T>
constexpr std::size_t whole_cache_lines(std::size_t n) {
  constexpr std::size_t per_line = kCacheLineBytes / sizeof(T);
  return (n + per_line - 1) / per_line * per_line;
}

}  // namespace cpm
