#pragma once
// The OpenMP thread number, for indexing per-thread scratch blocks sized by max_threads().
#include <omp.h>

namespace cpm {

inline int omp_thread() {
  return omp_get_thread_num();
}
inline int max_threads() {
  return omp_get_max_threads();
}

}  // namespace cpm
