#pragma once
// FFTW's planner is global state shared by every transform of the process: its threads are
// initialised once (and its MPI interface once, for the distributed transforms), and plans are
// made and destroyed one at a time under this mutex.
#include <mutex>

namespace cpm {

std::mutex& fftw_planner_mutex();
void initialise_fftw_threads();
// Also initialises the threads; call after MPI_Init.
void initialise_fftw_mpi();

}  // namespace cpm
