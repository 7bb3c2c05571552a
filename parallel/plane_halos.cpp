#include "parallel/plane_halos.hpp"

namespace cpm {

namespace {
enum Tag : int { kDown = 101, kUp = 102 };  // apart from the tags of other exchanges
}  // namespace

void PlaneHalos::exchange(double* planes) const {
  if (own_planes == 0) return;  // a rank without planes has no neighbours
  const int values = static_cast<int>(width * plane_cells);
  double* own = planes + own_offset * plane_cells;
  double* end = own + own_planes * plane_cells;
  double* from_above = above != MPI_PROC_NULL ? end : nullptr;
  double* from_below = below != MPI_PROC_NULL ? own - values : nullptr;
  // Down: the first own planes to `below`, the room above filled from `above`; then up.
  MPI_Sendrecv(own, below != MPI_PROC_NULL ? values : 0, MPI_DOUBLE, below, kDown, from_above,
               from_above ? values : 0, MPI_DOUBLE, above, kDown, communicator, MPI_STATUS_IGNORE);
  MPI_Sendrecv(end - values, above != MPI_PROC_NULL ? values : 0, MPI_DOUBLE, above, kUp,
               from_below, from_below ? values : 0, MPI_DOUBLE, below, kUp, communicator,
               MPI_STATUS_IGNORE);
}

}  // namespace cpm
