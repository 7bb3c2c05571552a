#pragma once
// Every rank's rows shown to every rank, with bounded buffers (docs/distributed.md §8): the rows
// of each rank (row-major, `width` doubles each) go round the ring of ranks in blocks of at most
// `block_rows` rows. In round j every rank visits its own j-th block, then P − 1 times sends the
// block it holds to rank + 1, receives one from rank − 1 and visits it, so that it visits the j-th
// block of ranks r, r − 1, …, r + 1 in that order; there are as many rounds as the largest share
// has blocks (a rank with fewer passes empty blocks; each block carries a flag saying whether its
// origin has more). A rank holds its own rows and two buffers of at most block_rows × width
// doubles, whatever the other shares; each rank's rows cross every other rank once.
#include <Eigen/Dense>
#include <functional>

#include "parallel/rank_group.hpp"

namespace cpm {

// 2¹⁶ rows: 1.5 MB a buffer for three coordinates.
inline constexpr Eigen::Index kRingBlockRows = Eigen::Index{1} << 16;

// visit(origin, rows, count): `count` rows (row-major) of rank `origin`'s share.
using RingVisit = std::function<void(int origin, const double* rows, Eigen::Index count)>;

// Collective over `ranks` (on one process: visit(0, …) per block, without MPI).
void ring_pass(const RankGroup& ranks, const double* rows, Eigen::Index count, int width,
               const RingVisit& visit, Eigen::Index block_rows = kRingBlockRows);

}  // namespace cpm
