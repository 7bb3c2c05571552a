#pragma once
// The fast direct pair sum: the same sums as the reference loop (solvers/interaction_sum.hpp),
// computed over blocks of particles held structure-of-arrays in aligned, padded buffers, one
// SIMD register of partners at a time, each unordered pair once (Newton's third law), with
// OpenMP over the tiles of a fixed round-robin schedule (solvers/tile_schedule.hpp). The
// summation order depends on N alone, so results do not depend on the thread count.
// Specialised loops for d = 1, 2, 3 and one generic loop for any d.
#include <memory>

#include "solvers/interaction_sum.hpp"

namespace cpm {

std::unique_ptr<InteractionSum> make_blocked_pair_sum(const InteractionKernel& kernel);

// Particles per block for N particles: a multiple of the SIMD width, small enough that a
// tile's partner block stays in the L1 cache and that there are enough tiles for the threads.
long pair_sum_block_size(long n);

}  // namespace cpm
