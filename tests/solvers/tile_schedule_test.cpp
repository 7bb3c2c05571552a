#include "solvers/tile_schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace cpm {
namespace {

TEST(TileSchedule, EveryBlockPairAppearsOnceAndNoBlockTwiceInARound) {
  for (int blocks = 1; blocks <= 21; ++blocks) {
    const TileSchedule schedule(blocks);
    std::set<std::pair<int, int>> seen;
    for (int r = 0; r < schedule.rounds(); ++r) {
      std::set<int> busy;
      EXPECT_LT(schedule.round_begin(r), schedule.round_begin(r + 1)) << "empty round " << r;
      for (std::size_t t = schedule.round_begin(r); t < schedule.round_begin(r + 1); ++t) {
        const Tile tile = schedule.tiles()[t];
        ASSERT_LE(tile.first_block, tile.second_block);
        ASSERT_LT(tile.second_block, blocks);
        EXPECT_TRUE(busy.insert(tile.first_block).second) << "blocks=" << blocks << " round " << r;
        if (tile.second_block != tile.first_block) {
          EXPECT_TRUE(busy.insert(tile.second_block).second)
              << "blocks=" << blocks << " round " << r;
        }
        EXPECT_TRUE(seen.insert({tile.first_block, tile.second_block}).second);
      }
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(blocks * (blocks + 1) / 2))
        << "blocks=" << blocks;
    // Round-robin needs at most `blocks` rounds after the diagonal one.
    EXPECT_LE(schedule.rounds(), blocks + 1);
  }
}

}  // namespace
}  // namespace cpm
