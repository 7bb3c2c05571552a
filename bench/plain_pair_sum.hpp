#pragma once
// The plain OpenMP-simd pair loop that bench/pair_force_bench.cpp compares the blocked sum with.
#include <memory>

#include "solvers/interaction_sum.hpp"

// Riesz kernels only: s = 0 (log), s = 1/2 and any s > 0; d = 1, 2, 3.
std::unique_ptr<cpm::InteractionSum> make_plain_simd_pair_sum(double s);
