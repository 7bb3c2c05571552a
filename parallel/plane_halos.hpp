#pragma once
// Halo planes of a field cut into slabs of planes along one axis (docs/distributed.md §6): a rank
// stores its own planes with room for `width` planes of each neighbour's before and after them
// (a contiguous array, plane after plane), and the exchange fills that room with the neighbours'
// planes next to its slab (MPI_Sendrecv down, then up). A missing neighbour (MPI_PROC_NULL, at the
// ends of the box or past the ranks with planes) leaves its room untouched.
#include <mpi.h>

#include <Eigen/Dense>

#include "parallel/slab_decomposition.hpp"

namespace cpm {

struct PlaneHalos {
  // The halos of `rank`'s slab of `slabs` stored after `own_offset` planes: its neighbours are
  // the ranks next to it that hold planes (none for a rank without planes).
  static PlaneHalos of_slab(const SlabDecomposition& slabs, int rank, Eigen::Index plane_cells,
                            long own_offset, int width, MPI_Comm communicator);

  Eigen::Index plane_cells = 1;  // values in one plane
  long own_offset = 0;           // planes stored before the rank's own
  long own_planes = 0;           // the rank's own planes (at least `width` when a neighbour exists)
  int width = 1;                 // halo planes exchanged each side
  int below = MPI_PROC_NULL, above = MPI_PROC_NULL;  // the neighbouring ranks
  MPI_Comm communicator = MPI_COMM_NULL;

  // Fills planes [own_offset − width, own_offset) from `below` and
  // [own_offset + own_planes, … + width) from `above`. Collective with the neighbours.
  void exchange(double* planes) const;
};

}  // namespace cpm
