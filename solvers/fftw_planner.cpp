#include "solvers/fftw_planner.hpp"

#include <fftw3-mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "parallel/team_stall_check.hpp"

namespace cpm {

void run_fftw_jobs(void* (*work)(char*), char* jobdata, std::size_t elsize, int njobs, void*) {
  const int threads = omp_in_parallel() ? 1 : std::min(njobs, omp_get_max_threads());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int i = 0; i < njobs; ++i) work(jobdata + elsize * static_cast<std::size_t>(i));
}

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

void initialise_fftw_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftw_make_planner_thread_safe();
    fftw_threads_set_callback(run_fftw_jobs, nullptr);
  });
}

void initialise_fftw_mpi() {
  initialise_fftw_threads();
  static std::once_flag once;
  std::call_once(once, [] { fftw_mpi_init(); });
}

PlanningThreads::PlanningThreads(bool measure, int jobs)
    : saved_(omp_get_max_threads()), lowered_(measure && jobs > 1 && !team_keeps_its_cores(jobs)) {
  fftw_plan_with_nthreads(jobs);
  if (lowered_) omp_set_num_threads(1);
}

PlanningThreads::~PlanningThreads() {
  if (lowered_) omp_set_num_threads(saved_);
}

}  // namespace cpm
