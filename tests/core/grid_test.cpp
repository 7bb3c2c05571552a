// The grid: indexing, cell geometry, masks of curved domains; densities on it: cell averages,
// moments and sampling.
#include "core/grid.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "core/observables.hpp"
#include "solvers/grid_density.hpp"

namespace cpm {
namespace {

TEST(Grid, LinearIndexAndCoordinatesAreInverse) {
  const Grid grid(Domain::whole_space(3), Eigen::Vector3d(-1, 0, 2), Eigen::Vector3d(1, 3, 5),
                  Eigen::Vector3i(4, 5, 6));
  ASSERT_EQ(grid.size(), 120);
  EXPECT_EQ(grid.stride(0), 1);
  EXPECT_EQ(grid.stride(1), 4);
  EXPECT_EQ(grid.stride(2), 20);
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    const Eigen::Vector3i i(grid.coordinate(c, 0), grid.coordinate(c, 1), grid.coordinate(c, 2));
    EXPECT_EQ(grid.index(i), c);
    for (int a = 0; a < 3; ++a)
      EXPECT_DOUBLE_EQ(grid.centre(c, a), grid.lower()[a] + (i[a] + 0.5) * grid.spacing(a));
  }
  EXPECT_DOUBLE_EQ(grid.cell_volume(), 0.5 * 0.6 * 0.5);
}

TEST(Grid, LocateFindsTheCellHoldingAPoint) {
  const Grid grid(Domain::whole_space(2), Eigen::Vector2d(0, 0), Eigen::Vector2d(2, 1),
                  Eigen::Vector2i(4, 2));
  const double inside[2] = {1.2, 0.7}, upper_corner[2] = {2.0, 1.0}, outside[2] = {-0.1, 0.5};
  EXPECT_EQ(grid.locate(inside), 2 + 4 * 1);
  EXPECT_EQ(grid.locate(upper_corner), grid.size() - 1);  // upper faces belong to the last cell
  EXPECT_EQ(grid.locate(outside), -1);
}

TEST(Grid, BallMaskKeepsExactlyTheCellsWhoseCentreLiesInTheBall) {
  const Domain ball = Domain::ball(Eigen::Vector2d(0.5, -0.5), 1.0);
  const Grid grid = Grid::over_domain(ball, Eigen::Vector2i(64, 64));
  EXPECT_EQ(grid.lower(), ball.lower());
  for (Eigen::Index c = 0; c < grid.size(); ++c)
    EXPECT_EQ(grid.active(c), (grid.centre(c) - ball.centre()).norm() <= 1.0);
  // The active area approaches π R².
  EXPECT_NEAR(grid.active_count() * grid.cell_volume(), M_PI, 0.02);
  EXPECT_THROW(Grid::over_domain(Domain::whole_space(2), Eigen::Vector2i(8, 8)),
               std::invalid_argument);
}

TEST(GridDensity, CellAveragesOfPolynomialsAreExact) {
  const Grid grid(Domain::whole_space(2), Eigen::Vector2d(-1, 0), Eigen::Vector2d(1, 2),
                  Eigen::Vector2i(5, 3));
  auto f = [](const Eigen::VectorXd& x) { return 1.0 + x[0] * x[0] * x[1] + std::pow(x[1], 5); };
  const std::vector<double> avg = cell_averages(grid, f, 3);
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    const double x = grid.centre(c, 0), y = grid.centre(c, 1), hx = grid.spacing(0),
                 hy = grid.spacing(1);
    // ∫ x² y over the cell / area = (x² + hx²/12) y;  ∫ y⁵ / hy = ((y+hy/2)⁶ − (y−hy/2)⁶)/(6 hy).
    const double expected = 1.0 + (x * x + hx * hx / 12.0) * y +
                            (std::pow(y + hy / 2, 6) - std::pow(y - hy / 2, 6)) / (6.0 * hy);
    EXPECT_NEAR(avg[c], expected, 1e-12);
  }
}

TEST(GridDensity, MomentsOfAUniformDensityIncludeTheWithinCellVariance) {
  const Grid grid(Domain::whole_space(1), Eigen::VectorXd::Constant(1, 0.0),
                  Eigen::VectorXd::Constant(1, 1.0), Eigen::VectorXi::Constant(1, 10));
  const std::vector<double> rho(10, 3.0);  // not normalised: moments normalise
  EXPECT_NEAR(density_mass(grid, rho), 3.0, 1e-14);
  EXPECT_NEAR(density_mean(grid, rho)[0], 0.5, 1e-14);
  EXPECT_NEAR(density_covariance(grid, rho)(0, 0), 1.0 / 12.0, 1e-14);
}

TEST(GridDensity, SamplesFollowTheDensityAndDoNotDependOnTheThreadCount) {
  const Grid grid(Domain::whole_space(2), Eigen::Vector2d(-2, -2), Eigen::Vector2d(2, 2),
                  Eigen::Vector2i(40, 40));
  const std::vector<double> rho = cell_averages(grid, [](const Eigen::VectorXd& x) {
    return std::exp(-0.5 * (x[0] - 0.3) * (x[0] - 0.3) / 0.25 - 0.5 * x[1] * x[1] / 0.09);
  });
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Particles one = sample_from_density(grid, rho, 20000, 9, 0);
  omp_set_num_threads(2);
  const Particles two = sample_from_density(grid, rho, 20000, 9, 0);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.positions, two.positions);
  const Eigen::VectorXd mean = ensemble_mean(one.positions),
                        expected_mean = density_mean(grid, rho);
  const Eigen::MatrixXd cov = ensemble_covariance(one.positions),
                        expected_cov = density_covariance(grid, rho);
  // Standard errors: σ/√N ≈ 0.0035 for the mean, about 0.003 for the variances.
  EXPECT_NEAR(mean[0], expected_mean[0], 0.015);
  EXPECT_NEAR(mean[1], expected_mean[1], 0.01);
  EXPECT_NEAR(cov(0, 0), expected_cov(0, 0), 0.012);
  EXPECT_NEAR(cov(1, 1), expected_cov(1, 1), 0.005);
  EXPECT_NEAR(cov(0, 1), 0.0, 0.005);
}

}  // namespace
}  // namespace cpm
