// Items claimed by a team: every item runs exactly once, whatever the team, the claim size and
// however many shares the team takes over, and each thread's first item is the first of its own
// share.
#include "parallel/claimed_items.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <thread>
#include <vector>

namespace cpm {
namespace {

// How often each of n items ran on a team of `team` threads, the shares made for `shares`.
std::vector<int> runs(int n, int claim, int shares, int team) {
  std::vector<std::atomic<int>> count(n);
  omp_set_num_threads(shares);
  ClaimedItems items(n, claim);
#pragma omp parallel num_threads(team)
  items.for_each([&](int i) { count[i].fetch_add(1); });
  std::vector<int> result(n);
  for (int i = 0; i < n; ++i) result[i] = count[i].load();
  return result;
}

TEST(ClaimedItems, EveryItemRunsExactlyOnce) {
  const int before = omp_get_max_threads();
  for (int team : {1, 2, 3, 4})
    for (int shares : {team, 4})  // a team smaller than its shares takes over the missing ones
      for (int n : {0, 1, 7, 128, 129})
        for (int claim : {1, 4, 200}) {
          const std::vector<int> count = runs(n, claim, shares, team);
          for (int i = 0; i < n; ++i)
            ASSERT_EQ(count[i], 1) << "item " << i << " of " << n << ", claims of " << claim << ", "
                                   << shares << " shares, team of " << team;
        }
  omp_set_num_threads(before);
}

// Each thread's first claim is taken before any thread runs a second item, so no share can have
// been emptied by another thread: the first item each thread runs opens its own share.
TEST(ClaimedItems, EachThreadStartsWithItsOwnShare) {
  const int before = omp_get_max_threads();
  constexpr int team = 3, n = 30, claim = 2;  // 15 claims, 5 per share
  omp_set_num_threads(team);
  ClaimedItems items(n, claim);
  std::vector<int> first(team, -1);
  std::atomic<int> started{0};
#pragma omp parallel num_threads(team)
  {
    bool waited = false;
    items.for_each([&](int i) {
      if (waited) return;
      waited = true;
      first[omp_get_thread_num()] = i;
      started.fetch_add(1);
      while (started.load() < omp_get_num_threads()) std::this_thread::yield();
    });
  }
  for (int t = 0; t < team; ++t) EXPECT_EQ(first[t], 10 * t) << "thread " << t;
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace cpm
