#pragma once
// The machine's measured peak, the reference of every "% of peak" the benchmarks print: the
// sustained rate of fused multiply-adds of one core in precision T (a multiply-add counts 2
// flops), from ten independent register chains on every SIMD lane, timed in the thread's own CPU
// time so that other processes on the machine do not bias it.
#include <time.h>

#include <algorithm>
#include <cstdio>

#include "solvers/simd_math.hpp"

namespace cpm::bench {

// Seconds of `clock`: CLOCK_THREAD_CPUTIME_ID (this thread), CLOCK_PROCESS_CPUTIME_ID (all).
inline double cpu_seconds(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class T>
double measured_fma_flops_per_core() {
  using Batch = xsimd::batch<T>;
  const long iterations = 20'000'000;
  double best = 1e300;
  for (int rep = 0; rep < 10; ++rep) {
    Batch a0(T(1.0)), a1(T(1.1)), a2(T(1.2)), a3(T(1.3)), a4(T(1.4)), a5(T(1.5)), a6(T(1.6)),
        a7(T(1.7)), a8(T(1.8)), a9(T(1.9));
    const Batch m(T(0.999999)), b(T(1e-9));
    const double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < iterations; ++i) {
      a0 = xsimd::fma(a0, m, b), a1 = xsimd::fma(a1, m, b), a2 = xsimd::fma(a2, m, b);
      a3 = xsimd::fma(a3, m, b), a4 = xsimd::fma(a4, m, b), a5 = xsimd::fma(a5, m, b);
      a6 = xsimd::fma(a6, m, b), a7 = xsimd::fma(a7, m, b), a8 = xsimd::fma(a8, m, b);
      a9 = xsimd::fma(a9, m, b);
    }
    best = std::min(best, cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0);
    const T sink = xsimd::hadd(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9);
    if (sink == T(42)) std::printf(" ");
  }
  return 2.0 * 10 * Batch::size * iterations / best;
}

}  // namespace cpm::bench
