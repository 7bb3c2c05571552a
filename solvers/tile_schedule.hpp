#pragma once
// The order in which a blocked pair sum visits its tiles. Particles are cut into blocks; a tile
// is an unordered pair of blocks {I, J}, and with Newton's third law it updates both. Tiles are
// grouped into rounds in which no block appears twice (round 0: the diagonal tiles {I, I};
// then the circle method of round-robin tournaments), so the tiles of a round run in parallel
// without write conflicts, and every block receives its contributions in the same order
// whatever the number of threads.
#include <omp.h>

#include <cstddef>
#include <vector>

namespace cpm {

struct Tile {
  int first_block, second_block;  // first ≤ second
};

class TileSchedule {
 public:
  explicit TileSchedule(int blocks);

  int blocks() const { return blocks_; }
  int rounds() const { return static_cast<int>(round_begin_.size()) - 1; }
  // The tiles of round r are tiles()[round_begin(r)] … tiles()[round_begin(r + 1) − 1].
  std::size_t round_begin(int r) const { return round_begin_[r]; }
  const std::vector<Tile>& tiles() const { return tiles_; }

  // Runs work(tile) for every tile as an OpenMP task that depends on its two blocks, created in
  // schedule order: tiles sharing a block run one after another in that order, so every block
  // receives its contributions in an order fixed by the number of blocks alone, and tiles of
  // different blocks run in parallel with no barrier between rounds. `parallel` false, one
  // block, or a call from inside a parallel region (a replica of a study): a plain loop in
  // schedule order, the same order per block — without the task machinery, whose allocation and
  // locking cost more than small sums (a third of a study's time in futex waits).
  template <class Work>
  void run_as_tasks(bool parallel, Work&& work) {
    if (!parallel || blocks_ <= 1 || omp_in_parallel()) {
      for (const Tile tile : tiles_) work(tile);
      return;
    }
    char* block = dependency_.data();
#pragma omp parallel if (parallel && blocks_ > 1)
#pragma omp single
    for (const Tile tile : tiles_) {
      char* first = block + tile.first_block;
      char* second = block + tile.second_block;
#pragma omp task firstprivate(tile) depend(inout : first[0], second[0])
      work(tile);
    }
  }

 private:
  int blocks_;
  std::vector<Tile> tiles_;
  std::vector<std::size_t> round_begin_;
  std::vector<char> dependency_;  // one address per block, for the task dependencies
};

}  // namespace cpm
