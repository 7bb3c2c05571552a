// The second-order grid flux (limited piecewise-linear reconstruction, docs/numerics.md §3.3) on
// what the first-order flux handles worst: discontinuous initial data with vacuum. Its step
// bound keeps ρ ≥ 0; every step conserves mass and lowers the free energy; the observed L1 order
// on a smooth transient with a known exact solution (docs/exact_solutions.md §2); and the error of
// the second moment of a spreading ball, against the closed form of its growth, in 2D and 3D.
// The tests the two fluxes share are in tests/solvers/mckean_vlasov_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>

#include "convergence_report.hpp"
#include "solvers/grid_density.hpp"
#include "solvers/mckean_vlasov.hpp"

namespace cpm {
namespace {

using Kernel = InteractionKernel;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Reconstruction kSchemes[] = {Reconstruction::first_order, Reconstruction::limited_linear};

std::string name_of(Reconstruction scheme) {
  return scheme == Reconstruction::first_order ? "first order" : "second order";
}

McKeanVlasovParameters parameters(double lambda, double beta, Reconstruction scheme) {
  McKeanVlasovParameters p;
  p.lambda = lambda;
  p.beta = beta;
  p.reconstruction = scheme;
  return p;
}

Grid box_grid(int d, double half_width, int cells) {
  return Grid(Domain::whole_space(d), Eigen::VectorXd::Constant(d, -half_width),
              Eigen::VectorXd::Constant(d, half_width), Eigen::VectorXi::Constant(d, cells));
}

Grid ball_grid(int d, double radius, int cells) {
  return Grid::over_domain(Domain::ball(Eigen::VectorXd::Zero(d), radius),
                           Eigen::VectorXi::Constant(d, cells));
}

// Cell averages of the indicator of the ball |x − centre| < radius, normalised to unit mass.
std::vector<double> ball_indicator(const Grid& grid, double radius, double centre = 0.0) {
  const int points = grid.dim() == 3 ? 4 : 8;
  std::vector<double> rho = cell_averages(
      grid,
      [&](const Eigen::VectorXd& x) {
        return (x.array() - centre).matrix().norm() < radius ? 1.0 : 0.0;
      },
      points);
  const double mass = density_mass(grid, rho);
  for (double& r : rho) r /= mass;
  return rho;
}

// ∫|x|² ρ of the piecewise-constant density: Σ_c h^d ρ_c |x_c|² plus the within-cell part
// Σ_a h_a²/12 per unit mass.
double second_moment(const Grid& grid, const std::vector<double>& rho) {
  double sum = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) sum += rho[c] * grid.centre(c).squaredNorm();
  double within = 0.0;
  for (int a = 0; a < grid.dim(); ++a) within += grid.spacing(a) * grid.spacing(a) / 12.0;
  return grid.cell_volume() * sum + within * density_mass(grid, rho);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct DiscontinuousCase {
  std::string name;
  Grid grid;
  double a;  // V = a|x|²/2
  Kernel kernel;
  double beta;
  double radius, centre;  // the initial ball indicator
  int steps;
};

std::vector<DiscontinuousCase> discontinuous_cases() {
  return {
      {"1D log gas from an interval, no noise", box_grid(1, 2.0, 200), 1.0, Kernel::log(), kInf,
       0.5, 0.3, 300},
      {"1D |z| attraction from an interval with noise", box_grid(1, 4.0, 160), 0.0,
       Kernel::absolute(1.0), 20.0, 1.0, 0.0, 300},
      {"2D log gas from a disk with noise, no confinement", box_grid(2, 1.5, 64), 0.0,
       Kernel::log(), 100.0, 0.5, 0.0, 100},
      {"2D Riesz s=1 from a disk with noise, ball (masked cells)", ball_grid(2, 2.0, 48), 1.0,
       Kernel::power(1.0), 50.0, 0.6, 0.2, 150},
      {"3D Coulomb from a ball with noise, ball (masked cells)", ball_grid(3, 2.0, 16), 1.0,
       Kernel::power(1.0), 20.0, 0.8, 0.1, 40},
  };
}

TEST(McKeanVlasovSecondOrder, ForwardEulerWithinTheStepBoundKeepsDiscontinuousDataNonNegative) {
  // rhs() returns max_c r_c, r_c = (outflow of c)/ρ_c; the step 1/max r_c empties at most one cell
  // and leaves every other non-negative (docs/numerics.md §3.3). The right-hand side sums to zero.
  for (const DiscontinuousCase& c : discontinuous_cases()) {
    const std::vector<double> rho = ball_indicator(c.grid, c.radius, c.centre);
    McKeanVlasovSolver solver(c.grid, QuadraticPotential(c.a), c.kernel,
                              parameters(1.0, c.beta, Reconstruction::limited_linear), rho);
    std::vector<double> derivative(rho.size());
    const double rate = solver.rhs(rho, derivative);
    ASSERT_GT(rate, 0.0) << c.name;
    const double largest = *std::max_element(rho.begin(), rho.end());
    double lowest = kInf, total = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < rho.size(); ++i) {
      lowest = std::min(lowest, rho[i] + derivative[i] / rate);
      total += derivative[i];
      scale += std::abs(derivative[i]);
    }
    EXPECT_GE(lowest, -1e-14 * largest) << c.name;
    EXPECT_LT(std::abs(total), 1e-13 * scale) << c.name;
  }
}

TEST(McKeanVlasovSecondOrder,
     EveryStepFromDiscontinuousDataConservesMassStaysNonNegativeAndLowersF) {
  for (const DiscontinuousCase& c : discontinuous_cases()) {
    McKeanVlasovSolver solver(c.grid, QuadraticPotential(c.a), c.kernel,
                              parameters(1.0, c.beta, Reconstruction::limited_linear),
                              ball_indicator(c.grid, c.radius, c.centre));
    const double mass0 = solver.mass();
    double energy = solver.energy().free_energy(), largest_drift = 0.0;
    for (int n = 0; n < c.steps; ++n) {
      solver.step();
      largest_drift = std::max(largest_drift, std::abs(solver.mass() - mass0) / mass0);
      const double minimum = *std::min_element(solver.density().begin(), solver.density().end());
      ASSERT_GE(minimum, 0.0) << c.name << " step " << n;
      const double next = solver.energy().free_energy();
      ASSERT_LE(next, energy + 1e-13 * std::abs(energy)) << c.name << " step " << n;
      energy = next;
    }
    EXPECT_LT(largest_drift, 1e-12) << c.name;
    std::cout << c.name << ": " << c.steps << " steps to t=" << solver.time()
              << ", relative mass drift " << largest_drift << ", F=" << energy << '\n';
  }
}

// docs/exact_solutions.md §2 (V = a|x|²/2, W = κ|z|²/2, any β): a Gaussian stays Gaussian, so the
// exact cell averages are known at all times: products of erfc differences per axis.
std::vector<double> gaussian_cell_averages(const Grid& grid, const Eigen::VectorXd& mean,
                                           double std) {
  std::vector<double> rho(grid.size(), 0.0);
  const double scale = 1.0 / (std * std::sqrt(2.0));
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    double value = 1.0;
    for (int a = 0; a < grid.dim(); ++a) {
      const double h = grid.spacing(a), lower = grid.centre(c, a) - 0.5 * h - mean[a];
      value *= 0.5 * (std::erfc(lower * scale) - std::erfc((lower + h) * scale)) / h;
    }
    rho[c] = value;
  }
  return rho;
}

// Σ_c h^d |ρ_c − exact_c| at t, from exact cell averages of N(m0, 0.3² I) at t = 0; a = 1,
// κ = 0.5, β = 4: the variance relaxes as e^{−3t} from 0.09 towards 1/6.
double gaussian_l1_error(int d, int cells, double t, Reconstruction scheme) {
  const double a = 1.0, kappa = 0.5, beta = 4.0, std0 = 0.3;
  Eigen::VectorXd mean0 = Eigen::VectorXd::Zero(d);
  mean0[0] = 0.4;
  if (d >= 2) mean0[1] = -0.25;
  const Grid grid = box_grid(d, 2.5, cells);
  McKeanVlasovSolver solver(grid, QuadraticPotential(a), Kernel::quadratic(kappa),
                            parameters(1.0, beta, scheme),
                            gaussian_cell_averages(grid, mean0, std0));
  solver.advance_to(t);
  const double sigma_inf = 1.0 / (beta * (a + kappa));
  const double variance = sigma_inf + (std0 * std0 - sigma_inf) * std::exp(-2.0 * (a + kappa) * t);
  const std::vector<double> exact =
      gaussian_cell_averages(grid, mean0 * std::exp(-a * t), std::sqrt(variance));
  double l1 = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) l1 += std::abs(solver.density()[c] - exact[c]);
  return l1 * grid.cell_volume();
}

void expect_smooth_order(int d, const std::vector<int>& cells) {
  // t = 0.25: the variance has covered half of its way to equilibrium, the mean a fifth.
  for (Reconstruction scheme : kSchemes) {
    std::vector<double> errors;
    for (int n : cells) errors.push_back(gaussian_l1_error(d, n, 0.25, scheme));
    const double order = testing::report_orders(
        std::to_string(d) + "D Gaussian case at t=0.25, L1 error of the cell averages [" +
            name_of(scheme) + "]",
        cells, errors);
    if (scheme == Reconstruction::limited_linear) {
      EXPECT_GE(order, 1.8);
    }
  }
}

TEST(McKeanVlasovSecondOrder, SmoothTransientConvergesAtSecondOrderInL1In1D) {
  expect_smooth_order(1, {50, 100, 200});
}

TEST(McKeanVlasovSecondOrder, SmoothTransientConvergesAtSecondOrderInL1In2D) {
  expect_smooth_order(2, {32, 64, 128});
}

// A ball of radius 0.5, uniform, spreading under diffusion and the repulsion W = −log|z| with
// V = 0 in the box [−1.5, 1.5]^d. Since z·∇W(z) = −1, the second moment grows at the constant rate
//     d/dt ∫|x|²ρ = λ + 2d/β,
// (for λ = 1 and unit mass; the mass stays far from the box's edge) from the grid's own initial
// moment, so the error of the grid's second moment at t_end is known exactly. Returns it, signed.
double spreading_ball_error(int d, int cells, double beta, double t_end, Reconstruction scheme,
                            std::uint64_t* steps = nullptr) {
  const Grid grid = box_grid(d, 1.5, cells);
  std::vector<double> rho = ball_indicator(grid, 0.5);
  const double exact = second_moment(grid, rho) + (1.0 + 2.0 * d / beta) * t_end;
  McKeanVlasovSolver solver(grid, ZeroPotential(), Kernel::log(), parameters(1.0, beta, scheme),
                            std::move(rho));
  solver.advance_to(t_end);
  if (steps) *steps = solver.steps_taken();
  return second_moment(grid, solver.density()) - exact;
}

TEST(McKeanVlasovSecondOrder, SecondMomentOfASpreadingDiskConvergesFasterThanFirstOrder) {
  // β = 100: the edge stays sharp on these grids (its diffusive width √(2t/β) = 0.06 at t = 0.2 is
  // one to five cells), the regime where the first-order flux is upwind and smears it.
  const std::vector<int> cells = {32, 64, 128};
  std::vector<double> errors[2];
  for (int k = 0; k < 2; ++k) {
    std::cout << "2D spreading disk [" << name_of(kSchemes[k]) << "], steps:";
    for (int n : cells) {
      std::uint64_t steps = 0;
      errors[k].push_back(std::abs(spreading_ball_error(2, n, 100.0, 0.2, kSchemes[k], &steps)));
      std::cout << ' ' << n << "^2: " << steps;
    }
    std::cout << '\n';
    testing::report_orders("2D spreading disk, beta=100, t=0.2, error of the second moment [" +
                               name_of(kSchemes[k]) + "]",
                           cells, errors[k]);
  }
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_LT(2.0 * errors[1][i], errors[0][i]) << cells[i] << " cells";
    if (i > 0) {
      EXPECT_GE(errors[1][i - 1] / errors[1][i], 2.0) << cells[i] << " cells";
    }
  }
}

TEST(McKeanVlasovSecondOrder, SecondMomentOfASpreadingBallAtLeastHalvesFrom32To64CellsIn3D) {
  // The 3D version, second order only (bench/grid_front_bench.cpp compares both fluxes and more
  // parameters): 32³ and 64³ cells, β = 100, t = 0.05.
  const std::vector<int> cells = {32, 64};
  std::vector<double> errors;
  for (int n : cells) {
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t steps = 0;
    errors.push_back(
        std::abs(spreading_ball_error(3, n, 100.0, 0.05, Reconstruction::limited_linear, &steps)));
    std::cout << "3D spreading ball, " << n << "^3 cells: " << steps << " steps, "
              << seconds_since(start) << " s\n";
  }
  testing::report_orders("3D spreading ball, beta=100, t=0.05, error of the second moment", cells,
                         errors);
  EXPECT_GE(errors[0] / errors[1], 2.0);
}

}  // namespace
}  // namespace cpm
