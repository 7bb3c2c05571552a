#include "parallel/plane_halos.hpp"

namespace cpm {

namespace {
enum Tag : int { kDown = 101, kUp = 102 };  // apart from the tags of other exchanges
}  // namespace

PlaneHalos PlaneHalos::of_slab(const SlabDecomposition& slabs, int rank, Eigen::Index plane_cells,
                               long own_offset, int width, MPI_Comm communicator) {
  PlaneHalos h;
  h.plane_cells = plane_cells;
  h.own_offset = own_offset;
  h.own_planes = slabs.plane_count(rank);
  h.width = width;
  h.communicator = communicator;
  if (h.own_planes > 0 && rank > 0) h.below = rank - 1;
  if (h.own_planes > 0 && rank + 1 < slabs.ranks() && slabs.plane_count(rank + 1) > 0)
    h.above = rank + 1;
  return h;
}

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
