#include "parallel/team_stall_check.hpp"

#include <omp.h>

#include <chrono>

namespace cpm {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TeamStallCheck check_team_stalls(int threads) {
  if (threads < 2 || omp_in_parallel()) return {};
  const double start = now_seconds();
  double window_start = 0.0, last = 0.0, stalled = 0.0;  // written by the master thread only
  bool done = false;
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
#pragma omp master
    window_start = last = now_seconds();
    while (true) {
#pragma omp barrier
#pragma omp master
      {
        const double t = now_seconds();
        if (t - last > kStalledBarrier) stalled += t - last;
        last = t;
        done = t - window_start >= kTeamCheckWindow;
      }
#pragma omp barrier
      if (done) break;
    }
  }
  const double end = now_seconds();
  return {end - start, stalled / (end - window_start)};
}

bool team_keeps_its_cores(int threads) {
  return check_team_stalls(threads).stalled_share <= kStalledShare;
}

}  // namespace cpm
