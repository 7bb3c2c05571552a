#pragma once
// The distances of core/empirical_distances.hpp between N particles and a grid density, and the
// density's mean and covariance, for a system spread over MPI ranks (docs/distributed.md §8):
// each rank holds a share of the particles (any split, possibly none) and a slab of the density,
// whole planes along the grid's last axis (the grid solver's layout, §7; possibly none). Every
// rank receives the value for the whole system, equal to the one-process function's on the
// gathered particles and density to rounding (the sums run in another order). Nothing is gathered:
//
// - the density's total mass, moments and the histogram's terms are sums over each rank's cells
//   (MPI_Allreduce);
// - what needs every particle next to every cell or particle (the MMD's sums, the particles'
//   cells, their places in the global order) passes the shares round the ring of ranks in blocks
//   (parallel/ring_pass.hpp); the grid–grid term of the MMD exchanges the slabs of the ranks whose
//   planes lie within the kernel's reach, one at a time;
// - W1, W2 and the sliced W2 integrate the quantile functions piece by piece: a particle of rank k
//   in the global order covers u ∈ [k/N, (k+1)/N) of both quantile functions, a cell (an atom) of
//   the density [below, below + mass) with `below` the mass before it in the global order, and
//   W_p^p = Σ over overlapping (particle, cell) pairs of ∫ over the overlap — the sum of
//   core/empirical_distances.cpp on the same common refinement of [0, 1], whatever rank holds
//   each piece (see wasserstein_1d in the .cpp).
//
// Memory (besides the particles and the slab): a rank holds a row-major copy of its particles and
// a few values per particle (sorted keys, places, the MMD's row sums), a few per own cell (the
// unit masses, the counts, the smoothed masses; q^d atoms per cell for the sliced W2), the ring's
// two blocks of at most kRingBlockRows rows, and one other rank's slab of the smoothed masses at a
// time (no larger than the largest slab). No rank holds more than its share of the particles and
// of the grid and these bounded buffers.
#include <Eigen/Dense>

#include "core/empirical_distances.hpp"
#include "core/grid.hpp"
#include "parallel/rank_group.hpp"

namespace cpm {

// This rank's slab of a density on `grid` (the whole grid): the planes [first_plane, first_plane
// + planes) along its last axis, `values` holding their cells in Grid order.
class DensitySlab {
 public:
  DensitySlab(const Grid& grid, long first_plane, long planes, const double* values);

  const Grid& grid() const { return *grid_; }
  long first_plane() const { return first_plane_; }
  long planes() const { return planes_; }
  Eigen::Index plane_size() const { return plane_size_; }
  // The slab's cells are the grid's cells [first_cell(), first_cell() + size()).
  Eigen::Index first_cell() const { return first_plane_ * plane_size_; }
  Eigen::Index size() const { return planes_ * plane_size_; }
  const double* values() const { return values_; }

 private:
  const Grid* grid_;
  long first_plane_, planes_;
  Eigen::Index plane_size_;
  const double* values_;
};

// Each function below is collective over `ranks`; `x` (`samples`) is this rank's particles.

// d = 1: W1 and W2 as core/empirical_distances.hpp's wasserstein_1d.
Wasserstein1D wasserstein_1d(const Eigen::VectorXd& samples, const DensitySlab& slab,
                             const RankGroup& ranks);

// The sliced W2 of sliced_wasserstein2 (d = 1: W2).
double sliced_wasserstein2(const Eigen::MatrixXd& x, const DensitySlab& slab,
                           const Eigen::MatrixXd& directions, const RankGroup& ranks,
                           int points_per_axis = 2);

// The Gaussian MMD of mmd_gaussian.
double mmd_gaussian(const Eigen::MatrixXd& x, const DensitySlab& slab, double bandwidth,
                    const RankGroup& ranks);

// The histogram L1 distance of histogram_l1.
double histogram_l1(const Eigen::MatrixXd& x, const DensitySlab& slab, const RankGroup& ranks);

// The density's mean and covariance of solvers/grid_density.hpp (cell centres, plus h²/12 on the
// diagonal).
Eigen::VectorXd density_mean(const DensitySlab& slab, const RankGroup& ranks);
Eigen::MatrixXd density_covariance(const DensitySlab& slab, const RankGroup& ranks);

}  // namespace cpm
