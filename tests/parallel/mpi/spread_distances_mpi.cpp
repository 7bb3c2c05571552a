// The distances between particles and a grid density spread over ranks (each rank a share of the
// particles and a slab of planes) equal those of one process on the gathered particles and density
// (every rank computes them here from the whole system) to 1e-12 relative: 1D, 2D and 3D grids
// whose planes split evenly, unevenly and (on 4 ranks) leave a rank without planes, particle shares
// by id, uneven, and with no particle on the first rank, particles outside the grid and tied
// positions.
#include "parallel/spread_distances.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/observables.hpp"
#include "core/random_stream.hpp"
#include "experiments/run/side_by_side.hpp"
#include "parallel/ensemble_reductions.hpp"
#include "parallel/slab_decomposition.hpp"
#include "solvers/grid_density.hpp"
#include "tests/parallel/mpi/mpi_test_support.hpp"

namespace cpm {
namespace {

constexpr double kRelative = 1e-12;

Grid box_grid(const std::vector<int>& cells) {
  const int d = static_cast<int>(cells.size());
  Eigen::VectorXd lower(d), upper(d);
  Eigen::VectorXi n(d);
  for (int a = 0; a < d; ++a) {
    lower[a] = -1.5 - 0.25 * a;
    upper[a] = 1.5 + 0.5 * a;
    n[a] = cells[a];
  }
  return Grid(Domain::whole_space(d), lower, upper, n);
}

// A density with empty cells (and empty planes at the ends), the same on every rank.
std::vector<double> test_density(const Grid& grid) {
  std::vector<double> rho(static_cast<std::size_t>(grid.size()));
  const int s = grid.dim() - 1;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    RandomStream stream(5, RandomPurpose::test_inputs, 3, static_cast<std::uint64_t>(c));
    const double u = stream.uniform();
    const bool end_plane = grid.cells(s) > 4 && grid.coordinate(c, s) == 0;
    rho[c] = end_plane || c % 7 == 3 ? 0.0 : 0.2 + u;
  }
  return rho;
}

// N particles, a few outside the grid, with ties: particle 3's position repeated at 5, 6 and 20.
Eigen::MatrixXd test_particles(long n, int d) {
  Eigen::MatrixXd x = 0.8 * all_particles(n, d);
  for (const long k : {5L, 6L, 20L})
    if (k < n) x.row(k) = x.row(3);
  return x;
}

enum class Split { round_robin, uneven, first_rank_empty };

Particles split(const Eigen::MatrixXd& all, Split how) {
  if (how != Split::first_rank_empty) return share_of(all, how == Split::uneven);
  const int rank = world(MPI_Comm_rank), ranks = world(MPI_Comm_size);
  Particles p;
  for (long k = 0; k < all.rows(); ++k) {
    const int owner = ranks == 1 ? 0 : 1 + static_cast<int>(k % (ranks - 1));
    if (owner == rank) p.ids.push_back(static_cast<std::uint64_t>(k));
  }
  p.positions.resize(static_cast<Eigen::Index>(p.ids.size()), all.cols());
  for (Eigen::Index i = 0; i < p.positions.rows(); ++i)
    p.positions.row(i) = all.row(static_cast<Eigen::Index>(p.ids[i]));
  return p;
}

void expect_relative(double found, double expected, double scale, const std::string& what) {
  EXPECT_LE(std::abs(found - expected), kRelative * std::max(std::abs(expected), scale))
      << what << ": " << found << " against " << expected;
}

// Every distance, mean and covariance of the spread system against one process's.
void expect_one_process_values(const std::vector<int>& cells, long n, Split how) {
  const RankGroup ranks(MPI_COMM_WORLD);
  const Grid grid = box_grid(cells);
  const int d = grid.dim();
  const std::vector<double> rho = test_density(grid);
  const Eigen::MatrixXd all = test_particles(n, d);
  const Particles mine = split(all, how);
  const Eigen::MatrixXd& x = mine.positions;
  const SlabDecomposition slabs(grid.lower()[d - 1], grid.upper()[d - 1], cells.back(),
                                ranks.size());
  const long first = slabs.first_plane(ranks.rank()), planes = slabs.plane_count(ranks.rank());
  const DensitySlab slab(grid, first, planes, rho.data() + first * grid.stride(d - 1));
  const std::string what = std::to_string(d) + "D, " + std::to_string(cells.back()) + " planes, " +
                           std::to_string(n) + " particles, split " +
                           std::to_string(static_cast<int>(how));

  if (d == 1) {
    const Wasserstein1D expected = wasserstein_1d(all.col(0), grid, rho);
    const Wasserstein1D found = wasserstein_1d(x.col(0), slab, ranks);
    expect_relative(found.w1, expected.w1, 0.0, what + ", W1");
    expect_relative(found.w2, expected.w2, 0.0, what + ", W2");
  }
  const Eigen::MatrixXd directions = slicing_directions(d, 5);
  expect_relative(sliced_wasserstein2(x, slab, directions, ranks),
                  sliced_wasserstein2(all, grid, rho, directions), 0.0, what + ", sliced W2");
  const double side = (grid.upper() - grid.lower()).minCoeff();
  for (const double sigma : {side / 20.0, side / 3.0, 0.4 * grid.spacing().minCoeff()})
    expect_relative(mmd_gaussian(x, slab, sigma, ranks), mmd_gaussian(all, grid, rho, sigma), 0.0,
                    what + ", MMD sigma " + std::to_string(sigma));
  expect_relative(histogram_l1(x, slab, ranks), histogram_l1(all, grid, rho), 0.0,
                  what + ", histogram L1");

  const Eigen::MatrixXd grid_cov = density_covariance(grid, rho);
  const double scale = std::sqrt(grid_cov.trace());
  const Eigen::VectorXd grid_mean = density_mean(grid, rho), found_mean = density_mean(slab, ranks);
  const Eigen::MatrixXd found_cov = density_covariance(slab, ranks);
  const Eigen::VectorXd particle_mean = ensemble_mean(x, ranks);
  const Eigen::MatrixXd particle_cov = ensemble_covariance(x, particle_mean, ranks);
  for (int a = 0; a < d; ++a) {
    expect_relative(found_mean[a], grid_mean[a], scale, what + ", grid mean");
    expect_relative(particle_mean[a], ensemble_mean(all)[a], scale, what + ", particle mean");
    for (int b = 0; b < d; ++b) {
      expect_relative(found_cov(a, b), grid_cov(a, b), scale * scale, what + ", grid covariance");
      expect_relative(particle_cov(a, b), ensemble_covariance(all)(a, b), scale * scale,
                      what + ", particle covariance");
    }
  }

  // The profile of the figures, complete on the first rank.
  const SideBySideRun::Profile expected = marginal_profile(0.5, all, grid, rho);
  const SideBySideRun::Profile found = marginal_profile(0.5, x, slab, ranks);
  EXPECT_EQ(found.bin_centres, expected.bin_centres) << what;
  EXPECT_EQ(found.cell_centres, expected.cell_centres) << what;
  ASSERT_EQ(found.histogram.size(), expected.histogram.size()) << what;
  for (std::size_t b = 0; b < expected.histogram.size(); ++b)
    EXPECT_EQ(found.histogram[b], expected.histogram[b]) << what;  // whole counts
  if (ranks.first()) {
    ASSERT_EQ(found.density.size(), expected.density.size()) << what;
    const double largest = *std::max_element(expected.density.begin(), expected.density.end());
    for (std::size_t i = 0; i < expected.density.size(); ++i)
      expect_relative(found.density[i], expected.density[i], largest, what + ", marginal");
  }
}

TEST(SpreadDistancesMpi, OneDimensionalDistancesEqualThoseOfOneProcess) {
  for (const Split how : {Split::round_robin, Split::uneven, Split::first_rank_empty}) {
    expect_one_process_values({40}, 37, how);
    expect_one_process_values({13}, 200, how);
  }
  expect_one_process_values({3}, 11, Split::round_robin);  // 4 ranks: one without planes
  expect_one_process_values({40}, 1, Split::uneven);       // one particle
}

TEST(SpreadDistancesMpi, TwoDimensionalDistancesEqualThoseOfOneProcess) {
  for (const Split how : {Split::round_robin, Split::uneven, Split::first_rank_empty}) {
    expect_one_process_values({9, 7}, 50, how);
    expect_one_process_values({12, 16}, 150, how);
  }
  expect_one_process_values({6, 3}, 23, Split::first_rank_empty);  // 4 ranks: one without planes
}

TEST(SpreadDistancesMpi, ThreeDimensionalDistancesEqualThoseOfOneProcess) {
  expect_one_process_values({4, 3, 5}, 30, Split::uneven);
  expect_one_process_values({3, 4, 8}, 41, Split::first_rank_empty);
}

// Every rank sees the same failure, so none waits in a collective for one that stopped.
TEST(SpreadDistancesMpi, ADensityWithoutMassIsRefusedOnEveryRank) {
  const RankGroup ranks(MPI_COMM_WORLD);
  const Grid grid = box_grid({8});
  const std::vector<double> zero(8, 0.0);
  const SlabDecomposition slabs(grid.lower()[0], grid.upper()[0], 8, ranks.size());
  const long first = slabs.first_plane(ranks.rank());
  const DensitySlab slab(grid, first, slabs.plane_count(ranks.rank()), zero.data() + first);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Zero(ranks.first() ? 2 : 0, 1);
  EXPECT_THROW(wasserstein_1d(x.col(0), slab, ranks), std::invalid_argument);
  EXPECT_THROW(mmd_gaussian(x, slab, 0.1, ranks), std::invalid_argument);
}

}  // namespace
}  // namespace cpm
