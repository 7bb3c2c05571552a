// Distances between particles and a grid density: hand-computed cases, identities, and
// brute-force evaluations by independent formulas.
#include "core/empirical_distances.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace cpm {
namespace {

Grid line_grid(double lower, double upper, int cells) {
  return Grid(Domain::whole_space(1), Eigen::VectorXd::Constant(1, lower),
              Eigen::VectorXd::Constant(1, upper), Eigen::VectorXi::Constant(1, cells));
}

TEST(EmpiricalDistances, OneParticleAgainstUniformDensityHasClosedFormDistances) {
  // δ_0 against U[−1, 1]: W1 = ∫|x|/2 = 1/2, W2² = ∫x²/2 = 1/3.
  const Grid grid = line_grid(-1.0, 1.0, 7);
  const std::vector<double> uniform(7, 0.5);
  const Wasserstein1D w = wasserstein_1d(Eigen::VectorXd::Zero(1), grid, uniform);
  EXPECT_NEAR(w.w1, 0.5, 1e-14);
  EXPECT_NEAR(w.w2, std::sqrt(1.0 / 3.0), 1e-14);
}

TEST(EmpiricalDistances, TwoParticlesAgainstUniformDensityHaveClosedFormDistances) {
  // {−1/2, 1/2} against U[−1, 1]: W1 = 1/4, W2² = 1/12.
  const Grid grid = line_grid(-1.0, 1.0, 4);
  const std::vector<double> uniform(4, 0.5);
  const Wasserstein1D w = wasserstein_1d(Eigen::Vector2d(0.5, -0.5), grid, uniform);
  EXPECT_NEAR(w.w1, 0.25, 1e-14);
  EXPECT_NEAR(w.w2, std::sqrt(1.0 / 12.0), 1e-14);
}

TEST(EmpiricalDistances, OneDimensionalDistancesEqualBruteForceIntegrals) {
  // W1 = ∫ |F_N(x) − G(x)| dx (the CDF form) and W2² = ∫_0^1 |F_N^{-1} − G^{-1}|² du, both by
  // fine midpoint sums, against the exact quantile-merging computation.
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const Grid grid = line_grid(-2.0, 3.0, 23);
  std::vector<double> rho(23);
  for (double& r : rho) r = u(gen) < 0.2 ? 0.0 : u(gen);  // some empty cells
  double total = 0.0;
  for (double r : rho) total += r * grid.spacing(0);
  for (double& r : rho) r /= total;
  Eigen::VectorXd x(37);
  for (Eigen::Index k = 0; k < x.size(); ++k) x[k] = -2.5 + 6.0 * u(gen);

  auto grid_cdf = [&](double y) {
    double f = 0.0;
    for (int c = 0; c < 23; ++c) {
      const double lo = grid.lower()[0] + c * grid.spacing(0);
      f += rho[c] * std::clamp(y - lo, 0.0, grid.spacing(0));
    }
    return f;
  };
  auto particle_cdf = [&](double y) {
    return static_cast<double>((x.array() <= y).count()) / x.size();
  };
  const int steps = 400000;
  double w1 = 0.0;
  for (int i = 0; i < steps; ++i) {
    const double y = -3.0 + 7.0 * (i + 0.5) / steps;
    w1 += std::abs(particle_cdf(y) - grid_cdf(y)) * 7.0 / steps;
  }
  std::vector<double> sorted(x.data(), x.data() + x.size());
  std::sort(sorted.begin(), sorted.end());
  auto grid_quantile = [&](double p) {  // bisection on the CDF
    double lo = grid.lower()[0], hi = grid.upper()[0];
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (grid_cdf(mid) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  };
  double w2 = 0.0;
  const int levels = 40000;
  for (int i = 0; i < levels; ++i) {
    const double p = (i + 0.5) / levels;
    const double d = sorted[static_cast<std::size_t>(p * sorted.size())] - grid_quantile(p);
    w2 += d * d / levels;
  }
  const Wasserstein1D exact = wasserstein_1d(x, grid, rho);
  EXPECT_NEAR(exact.w1, w1, 1e-4);
  EXPECT_NEAR(exact.w2, std::sqrt(w2), 1e-3);
}

TEST(EmpiricalDistances, SlicedWassersteinOfATranslateIsTheShiftOverRootTwo) {
  // Particles at the sub-cell atoms of a uniform density, shifted by v: every projection is a
  // translate by θ·v, so SW2² = mean_θ (θ·v)² = |v|²/2 for equally spaced angles.
  const Grid grid(Domain::whole_space(2), Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(1.0, 1.0),
                  Eigen::Vector2i(5, 4));
  std::vector<double> rho(grid.size(), 1.0);
  const int q = 2;
  Eigen::MatrixXd x(grid.size() * q * q, 2);
  const Eigen::Vector2d v(0.3, -0.7);
  for (Eigen::Index c = 0, row = 0; c < grid.size(); ++c)
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < q; ++i, ++row) {
        x(row, 0) = grid.centre(c, 0) + ((i + 0.5) / q - 0.5) * grid.spacing(0) + v[0];
        x(row, 1) = grid.centre(c, 1) + ((j + 0.5) / q - 0.5) * grid.spacing(1) + v[1];
      }
  const double sw = sliced_wasserstein2(x, grid, rho, slicing_directions(2, 8), q);
  EXPECT_NEAR(sw, v.norm() / std::sqrt(2.0), 1e-12);
}

TEST(EmpiricalDistances, SlicedWassersteinInOneDimensionIsW2) {
  const Grid grid = line_grid(0.0, 2.0, 10);
  std::vector<double> rho(10);
  for (int c = 0; c < 10; ++c) rho[c] = 1.0 + c;
  const Eigen::VectorXd x = Eigen::Vector3d(0.1, 1.5, 0.7);
  EXPECT_DOUBLE_EQ(sliced_wasserstein2(x, grid, rho, slicing_directions(1, 3)),
                   wasserstein_1d(x, grid, rho).w2);
}

TEST(EmpiricalDistances, SlicingDirectionsAreUnitVectors) {
  for (int d : {1, 2, 3}) {
    const Eigen::MatrixXd theta = slicing_directions(d, 12);
    ASSERT_EQ(theta.rows(), 12);
    for (Eigen::Index k = 0; k < 12; ++k) EXPECT_NEAR(theta.row(k).norm(), 1.0, 1e-14);
  }
}

// MMD² by brute force: every cell replaced by a midpoint lattice of `sub`^d points.
double brute_force_mmd2(const Eigen::MatrixXd& x, const Grid& grid, const std::vector<double>& rho,
                        double sigma, int sub) {
  const int d = grid.dim();
  std::vector<Eigen::VectorXd> points;
  std::vector<double> weights;
  double total = 0.0;
  for (double r : rho) total += r;
  const int per_cell = static_cast<int>(std::pow(sub, d));
  for (Eigen::Index c = 0; c < grid.size(); ++c)
    for (int s = 0; s < per_cell; ++s) {
      Eigen::VectorXd p(d);
      int rest = s;
      for (int a = 0; a < d; ++a) {
        p[a] = grid.centre(c, a) + ((rest % sub + 0.5) / sub - 0.5) * grid.spacing(a);
        rest /= sub;
      }
      points.push_back(p);
      weights.push_back(rho[c] / total / per_cell);
    }
  auto k = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return std::exp(-(a - b).squaredNorm() / (2 * sigma * sigma));
  };
  double pp = 0.0, pg = 0.0, gg = 0.0;
  const double n = static_cast<double>(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    for (Eigen::Index j = 0; j < x.rows(); ++j)
      pp += k(x.row(i).transpose(), x.row(j).transpose()) / (n * n);
    for (std::size_t j = 0; j < points.size(); ++j)
      pg += weights[j] * k(x.row(i).transpose(), points[j]) / n;
  }
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t j = 0; j < points.size(); ++j)
      gg += weights[i] * weights[j] * k(points[i], points[j]);
  return pp - 2 * pg + gg;
}

// The midpoint lattice errs by O(1/sub²): Richardson-extrapolate from sub and 2 sub.
double brute_force_mmd(const Eigen::MatrixXd& x, const Grid& grid, const std::vector<double>& rho,
                       double sigma, int sub) {
  const double coarse = brute_force_mmd2(x, grid, rho, sigma, sub);
  const double fine = brute_force_mmd2(x, grid, rho, sigma, 2 * sub);
  return std::sqrt(std::max(0.0, (4.0 * fine - coarse) / 3.0));
}

TEST(EmpiricalDistances, GaussianMmdEqualsBruteForceSums) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  {
    const Grid grid = line_grid(-1.0, 2.0, 12);
    std::vector<double> rho(12);
    for (double& r : rho) r = u(gen);
    Eigen::MatrixXd x(9, 1);
    for (Eigen::Index k = 0; k < 9; ++k) x(k, 0) = -1.5 + 4.0 * u(gen);
    for (double sigma : {0.05, 0.4, 2.0})
      EXPECT_NEAR(mmd_gaussian(x, grid, rho, sigma), brute_force_mmd(x, grid, rho, sigma, 60), 1e-6)
          << "sigma " << sigma;
  }
  {
    const Grid grid(Domain::whole_space(2), Eigen::Vector2d(-1.0, 0.0), Eigen::Vector2d(1.0, 1.2),
                    Eigen::Vector2i(5, 4));
    std::vector<double> rho(grid.size());
    for (double& r : rho) r = u(gen);
    Eigen::MatrixXd x(7, 2);
    for (Eigen::Index k = 0; k < 7; ++k) x.row(k) << -1.0 + 2.0 * u(gen), 1.2 * u(gen);
    for (double sigma : {0.15, 0.6})
      EXPECT_NEAR(mmd_gaussian(x, grid, rho, sigma), brute_force_mmd(x, grid, rho, sigma, 8), 1e-5)
          << "sigma " << sigma;
  }
}

TEST(EmpiricalDistances, HistogramL1CountsCellsAndParticlesOutsideTheGrid) {
  // Four cells of mass 1/4; particles in cells 0, 0, 2 and one outside:
  // |1/2 − 1/4| + |0 − 1/4| + |1/4 − 1/4| + |0 − 1/4| + 1/4 = 1.
  const Grid grid = line_grid(0.0, 4.0, 4);
  const std::vector<double> rho(4, 0.25);
  Eigen::MatrixXd x(4, 1);
  x << 0.5, 0.6, 2.5, 10.0;
  EXPECT_DOUBLE_EQ(histogram_l1(x, grid, rho), 1.0);
}

}  // namespace
}  // namespace cpm
