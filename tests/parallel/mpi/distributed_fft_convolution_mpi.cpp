#include "solvers/distributed_fft_convolution.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/random_stream.hpp"
#include "solvers/fft_convolution.hpp"

namespace cpm {
namespace {

// A box grid with the given cells per axis.
Grid box_grid(const std::vector<int>& cells) {
  const int d = static_cast<int>(cells.size());
  Eigen::VectorXd lower(d), upper(d);
  Eigen::VectorXi n(d);
  for (int a = 0; a < d; ++a) {
    lower[a] = -1.0 - 0.1 * a;
    upper[a] = 1.0 + 0.2 * a;
    n[a] = cells[a];
  }
  return Grid(Domain::box(lower, upper), lower, upper, n);
}

// Each rank's planes of K ∗ ρ match the serial FftConvolution of the whole grid (every rank
// computes it) to 1e-12 of its largest value, for a random density with zero cells.
void expect_serial_result(const std::vector<int>& cells, const InteractionKernel& kernel) {
  const Grid grid = box_grid(cells);
  std::vector<double> density(static_cast<std::size_t>(grid.size()));
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    RandomStream stream(3, RandomPurpose::test_inputs, 7, static_cast<std::uint64_t>(c));
    density[c] = c % 5 == 0 ? 0.0 : stream.uniform();
  }
  std::vector<double> expected(density.size());
  FftConvolution serial(grid, kernel, FftPlanning::estimate);
  serial.convolve(density.data(), expected.data());

  DistributedFftConvolution spread(grid, kernel, MPI_COMM_WORLD, FftPlanning::estimate);
  for (const double lambda : {1.0, -1.0})  // the step bound of the grid solver
    EXPECT_NEAR(spread.stiffness(lambda), serial.stiffness(lambda),
                1e-10 * std::max(1.0, serial.stiffness(lambda)))
        << cells.size() << "D " << cells.back() << " planes, " << kernel.describe() << ", lambda "
        << lambda;
  const Eigen::Index first = spread.first_plane() * spread.plane_size();
  std::vector<double> local(static_cast<std::size_t>(spread.local_size())), found(local.size());
  std::copy(density.begin() + first, density.begin() + first + spread.local_size(), local.begin());
  for (int repeat = 0; repeat < 2; ++repeat) {  // plans and buffers are reused
    spread.convolve(local.data(), found.data());
    double scale = 0.0, error = 0.0;
    for (double v : expected) scale = std::max(scale, std::abs(v));
    for (Eigen::Index c = 0; c < spread.local_size(); ++c)
      error = std::max(error, std::abs(found[c] - expected[first + c]));
    EXPECT_LE(error, 1e-12 * scale) << cells.size() << "D, " << kernel.describe();
  }
  // The planes of all ranks together are the grid.
  long planes = spread.plane_count();
  MPI_Allreduce(MPI_IN_PLACE, &planes, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(planes, cells.back());
}

TEST(DistributedFftConvolution, EachRankHoldsItsPlanesOfTheSerialConvolution) {
  // Plane counts that split evenly, unevenly and (on 4 ranks, 3 planes) leave a rank empty.
  for (const InteractionKernel& kernel :
       {InteractionKernel::power(0.5), InteractionKernel::log()}) {
    expect_serial_result({13}, kernel);
    expect_serial_result({3}, kernel);
    expect_serial_result({12, 9}, kernel);
    expect_serial_result({7, 3}, kernel);
    expect_serial_result({6, 5, 8}, kernel);
    expect_serial_result({4, 6, 3}, kernel);
  }
  expect_serial_result({10, 11}, InteractionKernel::power(-0.5));
}

}  // namespace
}  // namespace cpm
