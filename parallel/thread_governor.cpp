#include "parallel/thread_governor.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

namespace cpm {
namespace {

// The largest capacity any governor was made with: a governor lowers the OpenMP maximum while
// its loop runs, and scratch sized in the meantime must still fit the largest team.
std::atomic<int> largest_governed_capacity{0};
// The count the last governor ended on (0: every thread, 1: one): a study's next run starts
// where the machine's load left the last one.
std::atomic<int> last_incumbent{0};
// When a team last passed a check, and which check (steady-clock ns; 0: never), so that a study
// of many short runs does not check the team at the start of every one.
std::atomic<std::int64_t> last_passed_check_ns{0};
std::atomic<ThreadGovernor::TeamCheck> last_passed_check{nullptr};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int thread_capacity() {
  return std::max(omp_get_max_threads(), largest_governed_capacity.load());
}

void ThreadGovernor::Recent::add(double s) {
  seconds[static_cast<std::size_t>(count % kWindow)] = s;
  ++count;
}

double ThreadGovernor::Recent::median() const {
  const int n = std::min(count, kWindow);
  if (n == 0) return 0.0;
  std::array<double, kWindow> sorted = seconds;
  for (int i = 1; i < n; ++i)  // insertion sort of at most kWindow entries
    for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; --j) std::swap(sorted[j], sorted[j - 1]);
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

ThreadGovernor::ThreadGovernor(int capacity, TeamCheck check)
    : capacity_(omp_in_parallel() ? 1
                                  : std::max(1, capacity > 0 ? capacity : omp_get_max_threads())),
      check_(check),
      chosen_{capacity_, 1} {
  int seen = largest_governed_capacity.load();
  while (seen < capacity_ && !largest_governed_capacity.compare_exchange_weak(seen, capacity_)) {
  }
  incumbent_ = capacity_ > 1 ? last_incumbent.load() : 0;
}

ThreadGovernor::~ThreadGovernor() {
  if (capacity_ == 1) return;
  last_incumbent.store(incumbent_);
  omp_set_num_threads(capacity_);
}

int ThreadGovernor::begin_step() {
  nested_ = omp_in_parallel();  // a replica of a parallel ensemble: its team is one thread
  if (nested_) return 1;
  // The first probe follows the first step (beside a busy process a step on the wrong count can
  // cost ten on the right one); a winning probe is confirmed after one more step on the
  // incumbent, so that one slow step (the first touches every buffer) does not decide alone.
  const bool was_probe = probing_;
  probing_ = capacity_ > 1 && recent_[incumbent_].count > 0 &&
             (wins_ > 0 ? !was_probe : since_probe_ >= probe_wait_);
  // A team that has not shown it keeps its cores is checked before it runs a step: at the first
  // step (a study's next run trusts a check passed less than kCheckValidity ago) and before the
  // first probe of a pair. A team that fails runs nothing; the step runs on one thread.
  const bool first_step = steps_[0] + steps_[1] == 0;
  const bool unproven_team =
      wins_ == 0 &&
      (probing_ ? incumbent_ == 1 : incumbent_ == 0 && first_step && !passed_lately());
  if (capacity_ > 1 && unproven_team && !team_passes_check()) {
    probing_ = false;
    incumbent_ = 1;
  }
  current_ = probing_ ? 1 - incumbent_ : incumbent_;
  if (capacity_ > 1) omp_set_num_threads(chosen_[current_]);
  return chosen_[current_];
}

void ThreadGovernor::end_step(double seconds_per_work, double work) {
  if (nested_) return;
  record(seconds_per_work, check_seconds_ / (work > 0.0 ? work : 1.0));
  check_seconds_ = 0.0;
  check_failed_ = false;
  if (capacity_ > 1)
    omp_set_num_threads(chosen_[incumbent_]);  // what runs between steps runs on the incumbent
}

void ThreadGovernor::record(double seconds, double check_cost) {
  ++steps_[current_];
  Recent& mine = recent_[incumbent_];
  if (!probing_) {
    mine.add(seconds);
    if (check_failed_) {
      lose(check_cost, mine.median());
      return;
    }
    since_probe_ += seconds;
    if (!mine.settled()) return;
    const double median = mine.median();
    if (chosen_median_ == 0.0) {
      chosen_median_ = median;
    } else if ((incumbent_ == 0 && median > kLoadChange * chosen_median_) ||
               median * kLoadChange < chosen_median_) {
      // The load changed: look at the other count again now. One thread slowing down is not such
      // a change (more load beside it makes a team only likelier to stall): its reference is its
      // fastest median, so only load leaving the machine counts.
      chosen_median_ = median;
      probe_wait_ = 0.0;
      losses_ = 0;
    } else if (incumbent_ == 1) {
      chosen_median_ = std::min(chosen_median_, median);
    }
    return;
  }
  ++probes_;
  const int other = 1 - incumbent_;
  if (wins_ == 0) recent_[other] = Recent{};
  recent_[other].add(seconds);
  const double median = mine.median();
  if (seconds < kWinRatio * median) {
    if (++wins_ < 2) return;  // confirm before switching
    incumbent_ = other;
    ++switches_;
    wins_ = losses_ = 0;
    chosen_median_ = 0.0;
    since_probe_ = 0.0;
    probe_wait_ = median / kProbeBudget;  // the count just left gets another look later
    return;
  }
  lose(seconds - median + check_cost, median);
}

bool ThreadGovernor::team_passes_check() {
  ++checks_;
  const TeamStallCheck check = check_(chosen_[0]);
  check_seconds_ = check.seconds;
  check_failed_ = check.stalled_share > kStalledShare;
  if (check_failed_) return false;
  last_passed_check_ns.store(now_ns());
  last_passed_check.store(check_);
  return true;
}

bool ThreadGovernor::passed_lately() const {
  return last_passed_check.load() == check_ &&
         now_ns() - last_passed_check_ns.load() < kCheckValidity * 1e9;
}

void ThreadGovernor::lose(double cost, double median) {
  wins_ = 0;
  losses_ = std::min(losses_ + 1, kMaxBackoff);
  since_probe_ = 0.0;
  probe_wait_ = std::max(cost, median) / kProbeBudget * std::ldexp(1.0, losses_ - 1);
}

GovernedStep::GovernedStep(ThreadGovernor& governor, double work)
    : governor_(governor), work_(work > 0.0 ? work : 1.0), start_ns_(0) {
  governor_.begin_step();
  start_ns_ = now_ns();
}

GovernedStep::~GovernedStep() {
  governor_.end_step(1e-9 * static_cast<double>(now_ns() - start_ns_) / work_, work_);
}

}  // namespace cpm
