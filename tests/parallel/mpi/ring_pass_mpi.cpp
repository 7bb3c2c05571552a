#include "parallel/ring_pass.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "tests/parallel/mpi/mpi_test_support.hpp"

namespace cpm {
namespace {

// Rank r holds 3r + (r == 1 ? 0 : 2) rows (rank 1 none) of two values, (r, row index). Passed in
// blocks of 2 rows, every rank visits every row of every rank once, each block as its origin holds
// it, its own blocks first in each round, then those of r − 1, r − 2, … .
TEST(RingPassMpi, EveryRankVisitsEveryRowOfEveryRankOnce) {
  const RankGroup ranks(MPI_COMM_WORLD);
  const int p = ranks.size(), r = ranks.rank();
  auto rows_of = [](int rank) { return 3 * rank + (rank == 1 ? 0 : 2); };
  std::vector<double> own(2 * static_cast<std::size_t>(rows_of(r)));
  for (int i = 0; i < rows_of(r); ++i) {
    own[2 * i] = r;
    own[2 * i + 1] = i;
  }
  std::vector<std::vector<int>> seen(p);
  std::vector<int> origins;
  ring_pass(
      ranks, own.data(), rows_of(r), 2,
      [&](int origin, const double* rows, Eigen::Index count) {
        EXPECT_LE(count, 2);
        origins.push_back(origin);
        for (Eigen::Index i = 0; i < count; ++i) {
          EXPECT_EQ(rows[2 * i], origin);
          seen[origin].push_back(static_cast<int>(rows[2 * i + 1]));
        }
      },
      2);
  for (int origin = 0; origin < p; ++origin) {
    ASSERT_EQ(static_cast<int>(seen[origin].size()), rows_of(origin)) << origin;
    for (int i = 0; i < rows_of(origin); ++i) EXPECT_EQ(seen[origin][i], i);
  }
  ASSERT_EQ(origins.size() % p, 0u);
  for (std::size_t v = 0; v < origins.size(); ++v)
    EXPECT_EQ(origins[v], (r - static_cast<int>(v % p) + p) % p);
}

}  // namespace
}  // namespace cpm
