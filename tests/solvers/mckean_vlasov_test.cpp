// The McKean–Vlasov grid solver, with both fluxes (first order, and the limited second-order one of
// docs/numerics.md §3.3): the structure it must keep at every step (mass, positivity, free-energy
// decay) and the exact solutions of docs/exact_solutions.md, with the observed order of
// convergence under grid refinement printed. tests/solvers/mckean_vlasov_second_order_test.cpp
// holds what concerns the second-order flux alone.
#include "solvers/mckean_vlasov.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "convergence_report.hpp"
#include "core/quadrature.hpp"
#include "solvers/grid_density.hpp"

namespace cpm {

// Test names and failure messages print the scheme rather than its bytes.
void PrintTo(Reconstruction scheme, std::ostream* out) {
  *out << (scheme == Reconstruction::first_order ? "first_order" : "limited_linear");
}

namespace {

using Kernel = InteractionKernel;
using Density = std::function<double(const Eigen::VectorXd&)>;

double gaussian(const Eigen::VectorXd& x, const Eigen::VectorXd& mean, double std) {
  const int d = static_cast<int>(x.size());
  return std::exp(-(x - mean).squaredNorm() / (2 * std * std)) /
         std::pow(2 * M_PI * std * std, 0.5 * d);
}

McKeanVlasovParameters parameters(double lambda, double beta, Reconstruction scheme,
                                  double fixed_step = 0.0) {
  McKeanVlasovParameters p;
  p.lambda = lambda;
  p.beta = beta;
  p.fixed_step = fixed_step;
  p.reconstruction = scheme;
  return p;
}

McKeanVlasovSolver make_solver(const Grid& grid, double a, const Kernel& kernel, double lambda,
                               double beta, const Density& initial, Reconstruction scheme) {
  std::vector<double> rho = cell_averages(grid, initial);
  const double mass = density_mass(grid, rho);
  for (double& r : rho) r /= mass;
  return McKeanVlasovSolver(grid, QuadraticPotential(a), kernel, parameters(lambda, beta, scheme),
                            std::move(rho));
}

// Every test runs with both fluxes; the scheme is the test's parameter.
class McKeanVlasov : public ::testing::TestWithParam<Reconstruction> {
 protected:
  Reconstruction scheme() const { return GetParam(); }
  std::string label(const std::string& name) const {
    return name + (scheme() == Reconstruction::first_order ? " [first order]" : " [second order]");
  }
};

INSTANTIATE_TEST_SUITE_P(Schemes, McKeanVlasov,
                         ::testing::Values(Reconstruction::first_order,
                                           Reconstruction::limited_linear),
                         [](const ::testing::TestParamInfo<Reconstruction>& info) {
                           return info.param == Reconstruction::first_order ? "FirstOrder"
                                                                            : "SecondOrder";
                         });

Grid ball_grid(int d, double radius, int cells) {
  return Grid::over_domain(Domain::ball(Eigen::VectorXd::Zero(d), radius),
                           Eigen::VectorXi::Constant(d, cells));
}

Grid box_grid(int d, double half_width, int cells) {
  return Grid(Domain::whole_space(d), Eigen::VectorXd::Constant(d, -half_width),
              Eigen::VectorXd::Constant(d, half_width), Eigen::VectorXi::Constant(d, cells));
}

struct StructureCase {
  std::string name;
  Grid grid;
  Kernel kernel;
  double beta;
  int steps;
};

TEST_P(McKeanVlasov, EveryStepConservesMassKeepsDensityNonNegativeAndLowersFreeEnergy) {
  const double inf = std::numeric_limits<double>::infinity();
  const StructureCase cases[] = {
      {"1D log gas, no noise, ball", ball_grid(1, 3.0, 200), Kernel::log(), inf, 400},
      // Interactions more singular than |z|^{1−d}: their stiffness, not the CFL rate, sets the
      // step.
      {"1D Riesz s=0.5, no noise, ball", ball_grid(1, 2.8, 400), Kernel::power(0.5), inf, 600},
      {"2D Riesz s=1.5, no noise, ball", ball_grid(2, 2.0, 64), Kernel::power(1.5), inf, 150},
      {"1D |z| attraction with noise", box_grid(1, 6.0, 150), Kernel::absolute(1.0), 2.0, 400},
      {"2D Riesz s=1 with noise, ball (masked cells)", ball_grid(2, 2.0, 48), Kernel::power(1.0),
       20.0, 150},
      {"2D log gas, no noise, ball", ball_grid(2, 2.0, 40), Kernel::log(), inf, 150},
      {"3D Coulomb with noise, ball", ball_grid(3, 2.0, 16), Kernel::power(1.0), 10.0, 40},
  };
  for (const StructureCase& c : cases) {
    const int d = c.grid.dim();
    Eigen::VectorXd centre = Eigen::VectorXd::Constant(d, 0.3);
    McKeanVlasovSolver solver = make_solver(
        c.grid, 1.0, c.kernel, 1.0, c.beta,
        [&](const Eigen::VectorXd& x) { return gaussian(x, centre, 0.5); }, scheme());
    const double mass0 = solver.mass();
    double energy = solver.energy().free_energy(), largest_drift = 0.0;
    for (int n = 0; n < c.steps; ++n) {
      solver.step();
      largest_drift = std::max(largest_drift, std::abs(solver.mass() - mass0) / mass0);
      const double minimum = *std::min_element(solver.density().begin(), solver.density().end());
      ASSERT_GE(minimum, 0.0) << label(c.name) << " step " << n;
      const double next = solver.energy().free_energy();
      ASSERT_LE(next, energy + 1e-13 * std::abs(energy)) << label(c.name) << " step " << n;
      energy = next;
    }
    EXPECT_LT(largest_drift, 1e-12) << label(c.name);
    EXPECT_GT(solver.time(), 0.0);
    std::cout << label(c.name) << ": " << c.steps << " steps to t=" << solver.time()
              << ", relative mass drift " << largest_drift << ", F=" << energy << '\n';
  }
}

TEST_P(McKeanVlasov, DiscreteGibbsStateMakesEveryFluxVanish) {
  // λ = 0: on ρ ∝ e^{−βV} the Scharfetter–Gummel flux vanishes exactly, and ξ = V + β⁻¹ log ρ of
  // the second-order flux is constant up to rounding; also next to masked cells.
  const Grid grid = ball_grid(2, 2.0, 40);
  const double beta = 3.0;
  const QuadraticPotential v(1.0);
  const Eigen::MatrixXd centres = grid.centres();
  Eigen::VectorXd values;
  v.evaluate(centres, values, nullptr);
  std::vector<double> rho(grid.size(), 0.0);
  for (Eigen::Index c = 0; c < grid.size(); ++c)
    if (grid.active(c)) rho[c] = std::exp(-beta * values[c]);
  McKeanVlasovSolver solver(grid, v, Kernel::none(), parameters(0.0, beta, scheme()), rho);
  std::vector<double> derivative(grid.size());
  solver.rhs(rho, derivative);
  double worst = 0.0;
  for (double r : derivative) worst = std::max(worst, std::abs(r));
  // Relative to the size of one term, rate × ρ.
  const double largest = *std::max_element(rho.begin(), rho.end());
  EXPECT_LT(worst * solver.stable_step(), 1e-13 * largest);
}

TEST_P(McKeanVlasov, FixedStepAboveTheStabilityBoundIsRefused) {
  const Grid grid = box_grid(1, 3.0, 100);
  std::vector<double> rho = cell_averages(
      grid, [](const Eigen::VectorXd& x) { return gaussian(x, Eigen::VectorXd::Zero(1), 0.5); });
  McKeanVlasovSolver probe(grid, QuadraticPotential(1.0), Kernel::quadratic(1.0),
                           parameters(1.0, 2.0, scheme()), rho);
  const double bound = probe.stable_step();
  McKeanVlasovSolver fine(grid, QuadraticPotential(1.0), Kernel::quadratic(1.0),
                          parameters(1.0, 2.0, scheme(), 0.5 * bound), rho);
  EXPECT_NO_THROW(fine.step());
  EXPECT_DOUBLE_EQ(fine.time(), 0.5 * bound);
  McKeanVlasovSolver coarse(grid, QuadraticPotential(1.0), Kernel::quadratic(1.0),
                            parameters(1.0, 2.0, scheme(), 1.5 * bound), rho);
  EXPECT_THROW(coarse.step(), std::runtime_error);
}

// Errors of a 1D grid density against an exact density f: the L1 distance of the cell averages,
// Σ h |ρ_c − (1/h)∫_c f|, and the Wasserstein-1 distance ∫ |F_h − F| dx of the piecewise-constant
// density (8 Gauss points per cell; F by adaptive quadrature of f).
struct DensityErrors {
  double l1 = 0.0, w1 = 0.0;
};

DensityErrors errors_against(const Grid& grid, const std::vector<double>& rho,
                             const std::function<double(double)>& f) {
  static const GaussLegendreRule rule = gauss_legendre(8);
  const double h = grid.spacing(0);
  DensityErrors e;
  double exact_below = 0.0, grid_below = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    const double lo = grid.lower()[0] + c * h;
    for (std::size_t q = 0; q < rule.nodes.size(); ++q) {
      const double t = 0.5 * (1.0 + rule.nodes[q]);
      const double exact = exact_below + integrate_adaptive(f, lo, lo + t * h, 1e-12, 1e-15);
      e.w1 += 0.5 * rule.weights[q] * h * std::abs(exact - (grid_below + rho[c] * t * h));
    }
    const double cell_mass = integrate_adaptive(f, lo, lo + h, 1e-12, 1e-15);
    e.l1 += std::abs(rho[c] * h - cell_mass);
    exact_below += cell_mass;
    grid_below += rho[c] * h;
  }
  return e;
}

// Relaxes from a Gaussian (std 0.6) to t_end on n cells over [−L, L] and compares with f.
DensityErrors stationary_errors(int n, double half_width, const Kernel& kernel, double beta,
                                double a, double t_end, const std::function<double(double)>& f,
                                Reconstruction scheme) {
  const Grid grid = ball_grid(1, half_width, n);
  McKeanVlasovSolver solver = make_solver(
      grid, a, kernel, 1.0, beta,
      [](const Eigen::VectorXd& x) { return gaussian(x, Eigen::VectorXd::Zero(1), 0.6); }, scheme);
  solver.advance_to(t_end);
  return errors_against(grid, solver.density(), f);
}

// Both orders over n = 50..400 cells. The box is [−2R, 2R] for a support [−R, R], so that the
// support's edge falls on a cell face on every grid: otherwise the L1 error of the edge cell
// jumps with the edge's position inside its cell and hides the order.
void expect_stationary_convergence(const std::string& name, const Kernel& kernel, double radius,
                                   const std::function<double(double)>& f, double l1_order,
                                   double w1_order, Reconstruction scheme) {
  const std::vector<int> cells = {50, 100, 200, 400};
  std::vector<double> l1, w1;
  for (int n : cells) {
    const DensityErrors e = stationary_errors(
        n, 2.0 * radius, kernel, std::numeric_limits<double>::infinity(), 1.0, 8.0, f, scheme);
    l1.push_back(e.l1);
    w1.push_back(e.w1);
  }
  EXPECT_GT(testing::report_orders(name + ", L1 error of the stationary density", cells, l1),
            l1_order);
  EXPECT_GT(testing::report_orders(name + ", W1 error of the stationary density", cells, w1),
            w1_order);
  for (std::size_t i = 1; i < cells.size(); ++i) {
    EXPECT_LT(l1[i], l1[i - 1]) << name;
    EXPECT_LT(w1[i], w1[i - 1]) << name;
  }
}

TEST_P(McKeanVlasov, LogGasRelaxesToTheSemicircle) {
  // docs/exact_solutions.md §1: W = −log|z|, V = x²/2, β = ∞ → (1/π)√(2 − x²) on |x| ≤ √2.
  expect_stationary_convergence(
      label("semicircle"), Kernel::log(), std::sqrt(2.0),
      [](double x) { return std::sqrt(std::max(0.0, 2.0 - x * x)) / M_PI; }, 1.5, 1.8, scheme());
}

TEST_P(McKeanVlasov, OneDimensionalRieszGasRelaxesToItsEquilibriumProfile) {
  // docs/exact_solutions.md §1, d = 1, s = 0.5, a = 1: ρ = c (R² − x²)_+^{3/4}, R = 1.399635, c =
  // 0.300105.
  const double radius = 1.399635, c = 0.300105;
  expect_stationary_convergence(
      label("1D Riesz s=0.5"), Kernel::power(0.5), radius,
      [&](double x) { return c * std::pow(std::max(0.0, radius * radius - x * x), 0.75); }, 1.2,
      1.5, scheme());
}

TEST_P(McKeanVlasov, AttractionWithNoiseRelaxesToTheSechSquaredLaw) {
  // docs/exact_solutions.md §3: V = 0, W = κ|z|, ρ∞ = (βκ/4) sech²(βκx/2) about the centre of mass
  // (0 here, the initial law being symmetric).
  const double beta = 2.0, kappa = 1.0, k = beta * kappa / 2.0;
  auto f = [&](double x) { return 0.5 * k / (std::cosh(k * x) * std::cosh(k * x)); };
  const std::vector<int> cells = {40, 80, 160, 320};
  std::vector<double> l1, w1;
  for (int n : cells) {
    const Grid grid = box_grid(1, 8.0, n);
    McKeanVlasovSolver solver = make_solver(
        grid, 0.0, Kernel::absolute(kappa), 1.0, beta,
        [](const Eigen::VectorXd& x) { return gaussian(x, Eigen::VectorXd::Zero(1), 0.9); },
        scheme());
    solver.advance_to(24.0);
    const DensityErrors e = errors_against(grid, solver.density(), f);
    l1.push_back(e.l1);
    w1.push_back(e.w1);
  }
  EXPECT_GT(
      testing::report_orders(label("sech² law, L1 error of the stationary density"), cells, l1),
      1.8);
  EXPECT_GT(
      testing::report_orders(label("sech² law, W1 error of the stationary density"), cells, w1),
      1.8);
  for (std::size_t i = 1; i < cells.size(); ++i) EXPECT_LT(l1[i], l1[i - 1]);
}

// docs/exact_solutions.md §2: V = a|x|²/2, W = κ|z|²/2: mean(t) = mean(0) e^{−at},
// Cov(t) = Σ∞ + (Cov(0) − Σ∞) e^{−2(a+κ)t}, Σ∞ = I/(β(a+κ)). Returns the largest error of the
// mean and covariance entries over the check times.
double gaussian_case_error(int d, int cells, const std::vector<double>& times,
                           Reconstruction scheme) {
  const double a = 1.0, kappa = 0.5, beta = 4.0, std0 = 0.3;
  Eigen::VectorXd mean0(d);
  mean0[0] = 0.4;
  if (d == 2) mean0[1] = -0.25;
  const Grid grid = box_grid(d, 2.5, cells);
  McKeanVlasovSolver solver = make_solver(
      grid, a, Kernel::quadratic(kappa), 1.0, beta,
      [&](const Eigen::VectorXd& x) { return gaussian(x, mean0, std0); }, scheme);
  const double sigma_inf = 1.0 / (beta * (a + kappa));
  double worst = 0.0;
  for (double t : times) {
    solver.advance_to(t);
    const Eigen::VectorXd mean = density_mean(grid, solver.density());
    const Eigen::MatrixXd cov = density_covariance(grid, solver.density());
    const Eigen::VectorXd mean_exact = mean0 * std::exp(-a * t);
    const double var_exact =
        sigma_inf + (std0 * std0 - sigma_inf) * std::exp(-2.0 * (a + kappa) * t);
    const Eigen::MatrixXd cov_exact = var_exact * Eigen::MatrixXd::Identity(d, d);
    worst = std::max({worst, (mean - mean_exact).cwiseAbs().maxCoeff(),
                      (cov - cov_exact).cwiseAbs().maxCoeff()});
  }
  return worst;
}

TEST_P(McKeanVlasov, GaussianCaseWithNoiseFollowsTheExactMeanAndCovarianceIn1D) {
  const std::vector<int> cells = {50, 100, 200, 400};
  std::vector<double> errors;
  for (int n : cells)
    errors.push_back(gaussian_case_error(1, n, {0.1, 0.25, 0.5, 1.0, 2.0}, scheme()));
  EXPECT_GT(testing::report_orders(label("1D Gaussian case, mean and covariance through time"),
                                   cells, errors),
            1.8);
  EXPECT_LT(errors.back(), 1e-4);
}

TEST_P(McKeanVlasov, GaussianCaseWithNoiseFollowsTheExactMeanAndCovarianceIn2D) {
  const std::vector<int> cells = {16, 32, 64};
  std::vector<double> errors;
  for (int n : cells) errors.push_back(gaussian_case_error(2, n, {0.1, 0.25, 0.5, 1.0}, scheme()));
  EXPECT_GT(testing::report_orders(label("2D Gaussian case, mean and covariance through time"),
                                   cells, errors),
            1.8);
  EXPECT_LT(errors.back(), 2e-3);
}

}  // namespace
}  // namespace cpm
