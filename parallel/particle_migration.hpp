#pragma once
// Particles move between the slabs of a SlabDecomposition (docs/distributed.md §2):
// after a step each rank sends the rows whose coordinate `axis` (the slabs' coordinate) left its
// slab to their new owner (one MPI_Alltoall of counts, one MPI_Alltoallv each for the ids and the
// coordinates). The rows
// a rank holds afterwards are sorted by particle id, so the local order, and with it every sum
// over local particles, depends on the particles alone, never on where they came from. The
// communication buffers are kept between calls (they grow, never shrink); the positions matrix is
// resized when the local count changes. Only the leaving rows are packed and sent; the staying
// rows, already in id order, are merged with the sorted arrivals (O(N + k log k) for k arrivals),
// and when nothing moves the rows are left as they are.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/particles.hpp"
#include "parallel/slab_decomposition.hpp"

namespace cpm {

class ParticleMigration {
 public:
  // `decomposition` must have one slab per rank of `communicator`; it cuts coordinate `axis`.
  ParticleMigration(SlabDecomposition decomposition, MPI_Comm communicator, int axis = 0);

  // Sends every row to its owner; returns the number of rows this rank sent away. A rank's share
  // of the particles carries their ids (one per row).
  long migrate(Particles& particles);

 private:
  SlabDecomposition decomposition_;
  MPI_Comm communicator_;
  int axis_ = 0;
  int rank_ = 0;
  std::vector<int> destination_, send_counts_, receive_counts_, send_offsets_, receive_offsets_,
      cursor_;
  std::vector<int> coordinate_counts_, coordinate_offsets_, received_coordinate_counts_,
      received_coordinate_offsets_;
  std::vector<std::uint64_t> send_ids_, receive_ids_;
  std::vector<double> send_coordinates_, receive_coordinates_;
  std::vector<long> order_, staying_;
  Eigen::MatrixXd merged_positions_;  // the rows after a migration, swapped with the particles'
  std::vector<std::uint64_t> merged_ids_;
};

}  // namespace cpm
