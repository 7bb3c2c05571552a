#include "parallel/slab_decomposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace cpm {
namespace {

// FFTW's MPI layout: blocks of ⌈n₀/P⌉ planes from rank 0 on; every plane once; owners agree with
// the slabs' bounds; coordinates outside the box (and NaN) go to the end ranks.
TEST(SlabDecomposition, CutsThePlanesInFftwsBlocksAndOwnsEveryCoordinateOnce) {
  for (int ranks : {1, 2, 3, 4, 7})
    for (long planes : {1L, 5L, 8L, 64L, 100L}) {
      const SlabDecomposition slabs(-1.0, 3.0, planes, ranks);
      const long block = (planes + ranks - 1) / ranks;
      long covered = 0;
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(slabs.first_plane(r), std::min(planes, block * r));
        EXPECT_EQ(slabs.first_plane(r), covered);
        EXPECT_GE(slabs.plane_count(r), 0);
        EXPECT_LE(slabs.plane_count(r), block);
        covered += slabs.plane_count(r);
      }
      EXPECT_EQ(covered, planes);
      for (int i = 0; i < 1000; ++i) {
        const double x = -1.0 + 4.0 * (i + 0.5) / 1000.0;
        const int r = slabs.owner(x);
        ASSERT_GE(r, 0);
        ASSERT_LT(r, ranks);
        EXPECT_GE(x, slabs.lower(r)) << ranks << " " << planes;
        EXPECT_LT(x, slabs.upper(r)) << ranks << " " << planes;
      }
      const int last = static_cast<int>((planes - 1) / block);
      EXPECT_EQ(slabs.owner(-5.0), 0);
      EXPECT_EQ(slabs.owner(1e300), last);
      EXPECT_EQ(slabs.owner(std::numeric_limits<double>::quiet_NaN()), 0);
    }
}

TEST(SlabDecomposition, RejectsImpossibleLayouts) {
  EXPECT_THROW(SlabDecomposition(1.0, 1.0, 8, 2), std::invalid_argument);
  EXPECT_THROW(SlabDecomposition(0.0, 1.0, 0, 2), std::invalid_argument);
  EXPECT_THROW(SlabDecomposition(0.0, 1.0, 8, 0), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
