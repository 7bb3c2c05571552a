#pragma once
// FFTW's planner is global state shared by every transform of the process: its threads are
// initialised once (and its MPI interface once, for the distributed transforms), and plans are
// made and destroyed one at a time under this mutex. A threaded plan splits its loops into the
// jobs it was planned for; cpm runs those jobs on the team the OpenMP maximum allows when the
// transform runs, so a step the ThreadGovernor gives one thread runs its FFTs on one thread, with
// the same jobs and therefore the same result (docs/parallelism.md §2).
#include <cstddef>
#include <mutex>

namespace cpm {

std::mutex& fftw_planner_mutex();
void initialise_fftw_threads();
// Also initialises the threads; call after MPI_Init.
void initialise_fftw_mpi();

// FFTW's parallel loop as cpm runs it: job i is work(jobdata + i·elsize), each independent of the
// others, on at most the OpenMP maximum's threads (one inside a parallel region).
void run_fftw_jobs(void* (*work)(char*), char* jobdata, std::size_t elsize, int njobs, void*);

// The jobs of the plans made while this object lives, and the threads FFTW's planner may use
// meanwhile. FFTW_MEASURE times hundreds of candidate transforms; beside busy processes a team
// would stall at every one, so when plans of several jobs are measured and the team fails its
// check (parallel/team_stall_check.hpp), the candidates' jobs run on one thread. The plans keep
// their jobs. Call with fftw_planner_mutex() held.
class PlanningThreads {
 public:
  PlanningThreads(bool measure, int jobs);
  ~PlanningThreads();
  PlanningThreads(const PlanningThreads&) = delete;
  PlanningThreads& operator=(const PlanningThreads&) = delete;

 private:
  int saved_;
  bool lowered_;
};

}  // namespace cpm
