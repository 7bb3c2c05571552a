#pragma once
// The first line every benchmark prints: the SIMD instruction set the build compiled for (the
// figures depend on it: 8 doubles per register with AVX-512, 4 with AVX2) and the widest one
// the CPU offers, so that a build for less than the machine has is visible.
#include <cstdio>

#include "solvers/simd_math.hpp"

namespace cpm {

inline const char* cpu_instruction_set() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512F";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "AVX2+FMA";
  if (__builtin_cpu_supports("avx")) return "AVX";
  if (__builtin_cpu_supports("sse4.2")) return "SSE4.2";
  return "SSE2";
}

// E.g. "instruction set: AVX2+FMA (xsimd fma3+avx2, 4 doubles per register; CPU: AVX2+FMA)".
inline void print_instruction_set() {
  std::printf("instruction set: %s (xsimd %s, %zu doubles per register; CPU: %s)\n",
              simd_instruction_set(), xsimd::default_arch::name(), SimdDouble::size,
              cpu_instruction_set());
  std::fflush(stdout);
}

}  // namespace cpm
