#pragma once
// The OpenMP thread number, for indexing per-thread scratch blocks sized by max_threads().
#include <omp.h>

#include <cstddef>

#include "parallel/thread_governor.hpp"

namespace cpm {

inline int omp_thread() {
  return omp_get_thread_num();
}
// The largest team any region may run with (thread_capacity()), not the current one: a
// ThreadGovernor may lower the OpenMP maximum between steps.
inline int max_threads() {
  return thread_capacity();
}

// The size of one thread's scratch block rounded up to 16 elements, so that every thread's block
// starts at the same alignment: Eigen's vectorised kernels peel unaligned heads, which changes the
// order of their sums, and results must not depend on which thread ran an item.
inline std::size_t per_thread_block(std::size_t elements) {
  return (elements + 15) / 16 * 16;
}

}  // namespace cpm
