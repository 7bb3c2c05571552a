#pragma once
// Does a team of threads get its cores? Before the ThreadGovernor spends a whole step on a team
// that may stall (docs/parallelism.md §2), it times the team at empty barriers for a short
// window. On a machine with a free core per thread a barrier takes microseconds; beside a busy
// process one thread of the team loses its core for a scheduler time slice (milliseconds) again
// and again, and the barriers wait that long. The share of the window spent in such waits predicts
// the stall at a fraction of a step's cost.

namespace cpm {

struct TeamStallCheck {
  double seconds = 0.0;        // wall-clock time the check took, the team's start included
  double stalled_share = 0.0;  // share of the window spent in barriers slower than kStalledBarrier
};

// The window spans a few of Linux's time slices (a few ms each), so that a thread sharing its
// core is caught; a barrier slower than kStalledBarrier waited for a thread off its core.
inline constexpr double kTeamCheckWindow = 10e-3;
inline constexpr double kStalledBarrier = 100e-6;
// A team that waits longer than this share of the window would stall a step.
inline constexpr double kStalledShare = 0.25;

// Times `threads` threads at empty barriers for kTeamCheckWindow seconds after the first barrier
// (which only wakes the team). One thread never stalls: {0, 0}.
TeamStallCheck check_team_stalls(int threads);

// Whether a team of `threads` threads keeps its cores now: check_team_stalls within kStalledShare.
bool team_keeps_its_cores(int threads);

}  // namespace cpm
