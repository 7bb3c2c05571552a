#pragma once
// What the MPI tests share: the world's rank and size, a set of particles drawn the same on every
// rank, and a rank's share of it by id.
#include <mpi.h>

#include <Eigen/Dense>

#include "core/particles.hpp"
#include "core/random_stream.hpp"

namespace cpm {

inline int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  query(MPI_COMM_WORLD, &value);
  return value;
}

// N particles in d dimensions, the same on every rank.
inline Eigen::MatrixXd all_particles(long n, int d) {
  Eigen::MatrixXd x(n, d);
  for (long k = 0; k < n; ++k) {
    RandomStream stream(11, RandomPurpose::test_inputs, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) x(k, a) = stream.normal();
  }
  return x;
}

// This rank's share: ids k with k mod P = rank, or, `uneven`, the first half of the particles
// on the last rank and the rest spread over the others (some shares empty when N < P).
inline Particles share_of(const Eigen::MatrixXd& all, bool uneven) {
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  const long n = all.rows();
  Particles p;
  for (long k = 0; k < n; ++k) {
    const int owner = uneven ? (k < n / 2 ? ranks - 1 : static_cast<int>(k % ranks))
                             : static_cast<int>(k % ranks);
    if (owner == rank) p.ids.push_back(static_cast<std::uint64_t>(k));
  }
  p.positions.resize(static_cast<Eigen::Index>(p.ids.size()), all.cols());
  for (Eigen::Index i = 0; i < p.positions.rows(); ++i)
    p.positions.row(i) = all.row(static_cast<Eigen::Index>(p.ids[i]));
  return p;
}

}  // namespace cpm
