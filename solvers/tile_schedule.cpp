#include "solvers/tile_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace cpm {

TileSchedule::TileSchedule(int blocks) : blocks_(blocks) {
  if (blocks < 1) throw std::invalid_argument("a tile schedule needs at least one block");
  dependency_.assign(static_cast<std::size_t>(blocks), 0);
  round_begin_.push_back(0);
  for (int b = 0; b < blocks; ++b) tiles_.push_back({b, b});
  round_begin_.push_back(tiles_.size());

  // Circle method: m players (a dummy added when the count is odd); player m−1 stays fixed and
  // the others rotate, so in m−1 rounds every pair meets exactly once. Games with the dummy
  // are dropped.
  const int m = blocks + blocks % 2;
  auto add = [&](int a, int b) {
    if (a < blocks && b < blocks) tiles_.push_back({std::min(a, b), std::max(a, b)});
  };
  for (int r = 0; r + 1 < m; ++r) {
    add(r, m - 1);
    for (int k = 1; k < m / 2; ++k) add((r + k) % (m - 1), (r - k + (m - 1)) % (m - 1));
    if (tiles_.size() > round_begin_.back()) round_begin_.push_back(tiles_.size());
  }
}

}  // namespace cpm
