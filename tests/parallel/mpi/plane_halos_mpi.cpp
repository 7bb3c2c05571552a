#include "parallel/plane_halos.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "parallel/slab_decomposition.hpp"
#include "tests/parallel/mpi/mpi_test_support.hpp"

namespace cpm {
namespace {

// Value of cell c of global plane p: every plane different.
double value(long p, Eigen::Index c) {
  return 1000.0 * static_cast<double>(p) + static_cast<double>(c);
}

// Each rank's halo planes after the exchange hold its neighbours' planes next to its slab, the own
// planes are untouched, and room without a neighbour (the ends of the box) keeps its fill value.
void expect_halos(long planes, int width) {
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  const SlabDecomposition slabs(0.0, 1.0, planes, ranks);
  const Eigen::Index cells = 5;
  const PlaneHalos halos = PlaneHalos::of_slab(slabs, rank, cells, width, width, MPI_COMM_WORLD);
  const long first = slabs.first_plane(rank), stored = halos.own_planes + 2 * width;
  std::vector<double> field(static_cast<std::size_t>(stored * cells), -1.0);
  for (long q = 0; q < halos.own_planes; ++q)
    for (Eigen::Index c = 0; c < cells; ++c) field[(width + q) * cells + c] = value(first + q, c);
  halos.exchange(field.data());
  if (halos.own_planes == 0) return;
  for (long q = 0; q < stored; ++q) {
    const long p = first - width + q;  // the global plane stored at q
    const bool held = p >= 0 && p < planes;
    for (Eigen::Index c = 0; c < cells; ++c)
      EXPECT_EQ(field[q * cells + c], held ? value(p, c) : -1.0)
          << "planes " << planes << " width " << width << " rank " << rank << " plane " << p;
  }
}

TEST(PlaneHalosMpi, EachRankReceivesItsNeighboursPlanesNextToItsSlab) {
  expect_halos(12, 1);
  expect_halos(12, 2);
  expect_halos(17, 3);
  expect_halos(5, 1);  // on 4 ranks: 2, 2, 1 and no planes
}

}  // namespace
}  // namespace cpm
