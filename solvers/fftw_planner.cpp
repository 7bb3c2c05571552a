#include "solvers/fftw_planner.hpp"

#include <fftw3-mpi.h>

namespace cpm {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

void initialise_fftw_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftw_make_planner_thread_safe();
  });
}

void initialise_fftw_mpi() {
  initialise_fftw_threads();
  static std::once_flag once;
  std::call_once(once, [] { fftw_mpi_init(); });
}

}  // namespace cpm
