#include "parallel/particle_migration.hpp"

#include <fftw3-mpi.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "core/random_stream.hpp"

namespace cpm {
namespace {

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// The slabs are FFTW's: its MPI interface hands this rank the same planes of an n₀ × n₁ grid.
TEST(SlabDecompositionMpi, MatchesFftwsLocalPlanes) {
  for (long planes : {8L, 9L, 64L, 3L}) {
    ptrdiff_t local_planes = 0, local_start = 0;
    fftw_mpi_local_size_2d(planes, 16, MPI_COMM_WORLD, &local_planes, &local_start);
    const SlabDecomposition slabs(0.0, 1.0, planes, world_size());
    EXPECT_EQ(slabs.first_plane(world_rank()), local_planes > 0 ? local_start : planes) << planes;
    EXPECT_EQ(slabs.plane_count(world_rank()), local_planes) << planes;
  }
}

// Particle k's coordinates in round `round` (each round moves every particle by a random step).
Eigen::RowVectorXd coordinates(std::uint64_t k, int round, int d) {
  RandomStream stream(7, RandomPurpose::test_inputs, static_cast<std::uint64_t>(round), k);
  Eigen::RowVectorXd x(d);
  for (int a = 0; a < d; ++a) x[a] = 4.0 * stream.uniform() - 1.0;  // [−1, 3), some outside
  return x;
}

// N particles start on ranks chosen round-robin by id, out of their slabs; after each migration
// every rank holds exactly the particles of its slab, sorted by id, with their coordinates bit for
// bit, and every particle is held once. Rounds re-draw all coordinates, so most particles move.
TEST(ParticleMigrationMpi, EveryParticleEndsOnItsOwnerOnceInIdOrder) {
  const int ranks = world_size(), rank = world_rank(), d = 3;
  const std::uint64_t n = 1000;
  const SlabDecomposition slabs(0.0, 2.0, 32, ranks);
  ParticleMigration migration(slabs, MPI_COMM_WORLD);
  Particles local;
  for (std::uint64_t k = rank; k < n; k += ranks) local.ids.push_back(k);
  local.positions.resize(static_cast<Eigen::Index>(local.ids.size()), d);
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < local.ids.size(); ++i)
      local.positions.row(static_cast<Eigen::Index>(i)) = coordinates(local.ids[i], round, d);
    migration.migrate(local);
    ASSERT_EQ(local.positions.rows(), static_cast<Eigen::Index>(local.ids.size()));
    for (std::size_t i = 0; i < local.ids.size(); ++i) {
      if (i > 0) {
        EXPECT_LT(local.ids[i - 1], local.ids[i]);
      }
      const Eigen::RowVectorXd row = local.positions.row(static_cast<Eigen::Index>(i));
      EXPECT_EQ(row, coordinates(local.ids[i], round, d)) << local.ids[i];
      EXPECT_EQ(slabs.owner(row[0]), rank) << local.ids[i];
    }
    // Every id once over all ranks: the counts add up to N and the ids to N(N − 1)/2.
    std::uint64_t count = local.ids.size(), sum = 0, total_count = 0, total_sum = 0;
    for (std::uint64_t id : local.ids) sum += id;
    MPI_Allreduce(&count, &total_count, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &total_sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(total_count, n);
    EXPECT_EQ(total_sum, n * (n - 1) / 2);
  }
}

TEST(ParticleMigrationMpi, RefusesADecompositionForAnotherRankCount) {
  EXPECT_THROW(ParticleMigration(SlabDecomposition(0.0, 1.0, 8, world_size() + 1), MPI_COMM_WORLD),
               std::invalid_argument);
  Particles mismatched;
  mismatched.positions.resize(2, 2);
  ParticleMigration migration(SlabDecomposition(0.0, 1.0, 8, world_size()), MPI_COMM_WORLD);
  EXPECT_THROW(migration.migrate(mismatched), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
