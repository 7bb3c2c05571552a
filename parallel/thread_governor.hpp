#pragma once
// Threads that never hurt: a step loop asks the governor how many OpenMP threads its next step
// may use, all of them or one, and tells it how long the step took. On a quiet machine every
// thread is faster; beside another busy process a team of threads stalls at every barrier whose
// partner lost its core, and one thread is faster. The governor runs the faster count and now and
// then tries the other, so that it follows the machine as its load changes (docs/parallelism.md
// §2).
//
// Results never depend on the choice: every parallel loop of cpm splits its work into fixed chunks
// (kTokenChunks, tiles, cells) whose sums are added in a fixed order, whatever the team size.
//
// The probing rule keeps what it costs bounded. A step on the other count is a probe; the first
// follows the governor's first step. A probe
// that wins (faster than kWinRatio of the current count's recent median) is confirmed by a
// second one, one step later, before the governor switches. A probe that loses costs the difference
// to the median; the next probe waits until the steps since this one took 1/kProbeBudget times that
// cost (so probing takes at most kProbeBudget of the time) and twice as long again after every
// further loss, up to 2^kMaxBackoff. A current count whose median grows by kLoadChange (the
// machine's load changed) is probed at once.
//
// Beside busy processes a step on a team that stalls can cost ten steps on one thread, so no step
// runs on the team unchecked: before the governor's first step on it (unless a check passed less
// than kCheckValidity ago in this process) and before the first probe of a pair, a check of the
// team at empty barriers (parallel/team_stall_check.hpp) that finds it stalled for more than
// kStalledShare of its window counts as a lost probe of its own cost, and the step runs on one
// thread.
#include <array>
#include <cstdint>

#include "parallel/team_stall_check.hpp"

namespace cpm {

// The most threads any parallel region of cpm may use: the OpenMP maximum, or the count a live
// governor lowered it from. Per-thread scratch is sized by this, never by the current team.
int thread_capacity();

class ThreadGovernor {
 public:
  static constexpr double kWinRatio = 0.9;
  static constexpr double kProbeBudget = 0.02;
  static constexpr double kLoadChange = 1.5;
  static constexpr int kMaxBackoff = 6;
  static constexpr int kSettleSteps = 3;  // steps on a count before its median shows a change
  static constexpr int kWindow = 5;       // the median is over this many recent steps
  static constexpr double kCheckValidity = 1.0;  // seconds

  // How the team is checked: check_team_stalls, or a stand-in that knows the machine's load.
  using TeamCheck = TeamStallCheck (*)(int threads);

  // `capacity` threads at most (at least 1); the OpenMP maximum when omitted. Made or stepped
  // inside a parallel region (a replica of an ensemble), the governor changes nothing.
  explicit ThreadGovernor(int capacity = 0, TeamCheck check = check_team_stalls);
  // Restores the OpenMP maximum the governor found.
  ~ThreadGovernor();

  // The count for the next step, set as the OpenMP maximum for it; between steps the maximum is
  // the count the governor runs on.
  int begin_step();
  // The wall-clock seconds the step begun last took, per unit of its work (steps of unequal size,
  // batches of sequences of different lengths, compare by seconds per token), and that work.
  void end_step(double seconds_per_work, double work = 1.0);

  int capacity() const { return capacity_; }
  int current() const { return chosen_[current_]; }
  std::int64_t steps_on(int threads) const {
    return (chosen_[0] == threads ? steps_[0] : 0) + (chosen_[1] == threads ? steps_[1] : 0);
  }
  std::int64_t probes() const { return probes_; }
  std::int64_t switches() const { return switches_; }
  std::int64_t checks() const { return checks_; }

 private:
  struct Recent {
    std::array<double, kWindow> seconds{};
    int count = 0;
    void add(double s);
    double median() const;
    bool settled() const { return count >= kSettleSteps; }
  };
  void record(double seconds, double check_cost);
  // Whether the team, about to run the next step, keeps its cores. The check's cost counts, per
  // unit of the step's work, with the probe it preceded: a failed check is a lost probe of its
  // own cost, a passed one adds its cost to the probe's if that loses.
  bool team_passes_check();
  bool passed_lately() const;  // this kind of check, less than kCheckValidity ago
  void lose(double cost, double median);

  int capacity_;
  TeamCheck check_;
  std::array<int, 2> chosen_;  // [0]: every thread, [1]: one
  int incumbent_ = 0;          // the count steps run on
  int current_ = 0;            // the count of the step under way
  std::array<Recent, 2> recent_{};
  std::array<std::int64_t, 2> steps_{};
  double chosen_median_ = 0.0;  // the incumbent's median when it was chosen or last confirmed
  double since_probe_ = 0.0;    // seconds of steps since the last probe
  double probe_wait_ = 0.0;     // seconds to wait before the next probe
  int losses_ = 0, wins_ = 0;
  std::int64_t probes_ = 0, switches_ = 0, checks_ = 0;
  double check_seconds_ = 0.0;  // wall-clock seconds of the check before the step under way
  bool check_failed_ = false;
  bool probing_ = false;
  bool nested_ = false;  // the step under way runs inside a parallel region
};

// One timed step of a governed loop, of `work` units (1: steps of equal size): begins it on
// construction, ends it on destruction.
class GovernedStep {
 public:
  explicit GovernedStep(ThreadGovernor& governor, double work = 1.0);
  ~GovernedStep();
  // The step's work, when it is known only once the step has begun.
  void set_work(double work) { work_ = work > 0.0 ? work : 1.0; }
  GovernedStep(const GovernedStep&) = delete;
  GovernedStep& operator=(const GovernedStep&) = delete;

 private:
  ThreadGovernor& governor_;
  double work_;
  std::int64_t start_ns_;
};

}  // namespace cpm
