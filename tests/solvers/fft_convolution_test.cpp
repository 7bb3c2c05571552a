// W∗ρ by zero-padded FFT with cell-integrated weights: equal to the direct O(M²) sum of the
// same weights, to an independent O(M²) quadrature, and convergent to closed-form potentials.
#include "solvers/fft_convolution.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <iostream>
#include <random>

#include "convergence_report.hpp"
#include "core/quadrature.hpp"
#include "solvers/fftw_planner.hpp"
#include "solvers/grid_density.hpp"

namespace cpm {
namespace {

using Kernel = InteractionKernel;

Grid box_grid(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
              const Eigen::VectorXi& cells) {
  return Grid(Domain::whole_space(static_cast<int>(cells.size())), lower, upper, cells);
}

std::vector<double> random_density(Eigen::Index m, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> r(m);
  for (double& v : r) v = u(gen);
  return r;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

struct ConvolutionCase {
  Kernel kernel;
  Eigen::VectorXd lower, upper;
  Eigen::VectorXi cells;
};

std::vector<ConvolutionCase> small_cases() {
  return {
      {Kernel::log(), Eigen::VectorXd::Constant(1, -1.0), Eigen::VectorXd::Constant(1, 2.0),
       Eigen::VectorXi::Constant(1, 37)},
      {Kernel::power(0.5), Eigen::VectorXd::Constant(1, -1.0), Eigen::VectorXd::Constant(1, 1.0),
       Eigen::VectorXi::Constant(1, 16)},
      {Kernel::power(1.2), Eigen::Vector2d(-1.0, -0.5), Eigen::Vector2d(1.0, 0.9),
       Eigen::Vector2i(9, 7)},
      {Kernel::quadratic(2.0), Eigen::Vector2d(-1.0, -1.0), Eigen::Vector2d(1.0, 1.0),
       Eigen::Vector2i(8, 8)},
      {Kernel::power(1.0), Eigen::Vector3d(-1.0, -1.0, -1.0), Eigen::Vector3d(1.0, 0.6, 1.4),
       Eigen::Vector3i(4, 3, 5)},
  };
}

TEST(FftConvolution, EqualsTheDirectSumOfTheSameWeights) {
  for (const ConvolutionCase& c : small_cases()) {
    const Grid grid = box_grid(c.lower, c.upper, c.cells);
    FftConvolution fft(grid, c.kernel);
    const std::vector<double> rho = random_density(grid.size(), 7);
    std::vector<double> fast(grid.size()), direct(grid.size());
    fft.convolve(rho.data(), fast.data());
    direct_convolution(fft.weights(), grid.cells(), rho.data(), direct.data());
    const double scale = max_abs(direct);
    for (Eigen::Index i = 0; i < grid.size(); ++i)
      ASSERT_NEAR(fast[i], direct[i], 1e-12 * scale) << c.kernel.describe() << " cell " << i;
  }
}

// A threaded plan splits its loops into jobs; the ThreadGovernor may lower the OpenMP maximum to
// one thread between steps. The jobs then run on one thread, and the result keeps every bit.
TEST(FftConvolution, ThreadedPlanGivesTheSameBitsOnOneThread) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  const Grid grid = box_grid(Eigen::Vector2d(-1.0, -1.0), Eigen::Vector2d(1.0, 1.0),
                             Eigen::Vector2i(128, 128));  // padded 256²: a plan of 2 jobs
  FftConvolution fft(grid, Kernel::log(), FftPlanning::estimate);
  const std::vector<double> rho = random_density(grid.size(), 3);
  std::vector<double> team(grid.size()), one(grid.size());
  fft.convolve(rho.data(), team.data());
  omp_set_num_threads(1);
  fft.convolve(rho.data(), one.data());
  omp_set_num_threads(saved);
  for (Eigen::Index i = 0; i < grid.size(); ++i) ASSERT_EQ(team[i], one[i]) << "cell " << i;
}

struct JobRecord {
  int runs = 0;
  int thread = -1;
};

void* record_job(char* job) {
  auto* record = reinterpret_cast<JobRecord*>(job);
  ++record->runs;
  record->thread = omp_get_thread_num();
  return nullptr;
}

TEST(FftwJobs, RunEveryJobOnceOnAtMostTheOpenMpMaximum) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<JobRecord> jobs(6);
    run_fftw_jobs(record_job, reinterpret_cast<char*>(jobs.data()), sizeof(JobRecord), 6, nullptr);
    for (const JobRecord& job : jobs) {
      EXPECT_EQ(job.runs, 1);
      EXPECT_LT(job.thread, threads);
    }
    if (threads == 2) {
      EXPECT_EQ(jobs.back().thread, 1);  // static shares: the last job's thread
    }
  }
  omp_set_num_threads(saved);
}

TEST(FftwJobs, PlanningLowersTheThreadsOnlyWhenMeasuringATeamAndRestoresThem) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  initialise_fftw_threads();
  const std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  {
    const PlanningThreads estimate(false, 2);  // FFTW_ESTIMATE times nothing: no check
    EXPECT_EQ(omp_get_max_threads(), 2);
    const PlanningThreads one_job(true, 1);  // a plan of one job runs on one thread anyway
    EXPECT_EQ(omp_get_max_threads(), 2);
  }
  {
    const PlanningThreads measured(true, 2);  // one thread when the team fails its check
    EXPECT_TRUE(omp_get_max_threads() == 2 || omp_get_max_threads() == 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  omp_set_num_threads(saved);
}

// Independent quadrature of ∫_{C_j} W(x_i − y) dy: the singular cell (j = i) by the
// self-similar split of the cube (see cell_integrated_kernel_test), the cells next to it by
// 4 sub-cells per axis with 12 Gauss points each, farther cells by 12 Gauss points per axis.
double quadrature_over_cell(const Kernel& k, const Eigen::VectorXd& z_centre,
                            const Eigen::VectorXd& h) {
  const int d = static_cast<int>(h.size());
  static const GaussLegendreRule rule = gauss_legendre(12);
  const int pieces = (z_centre.array().abs() / h.array()).maxCoeff() < 1.5 ? 4 : 1;
  std::vector<double> x[3], w[3];
  for (int a = 0; a < 3; ++a) {
    if (a >= d) {
      x[a] = {0.0};
      w[a] = {1.0};
      continue;
    }
    for (int p = 0; p < pieces; ++p)
      for (int i = 0; i < 12; ++i) {
        x[a].push_back(z_centre[a] - 0.5 * h[a] + (p + 0.5 + 0.5 * rule.nodes[i]) * h[a] / pieces);
        w[a].push_back(0.5 * rule.weights[i] * h[a] / pieces);
      }
  }
  return visit(k, [&](auto kernel) {
    double s = 0.0;
    for (std::size_t i = 0; i < x[0].size(); ++i)
      for (std::size_t j = 0; j < x[1].size(); ++j)
        for (std::size_t l = 0; l < x[2].size(); ++l)
          s += w[0][i] * w[1][j] * w[2][l] *
               kernel.value_r2(x[0][i] * x[0][i] + x[1][j] * x[1][j] + x[2][l] * x[2][l]);
    return s;
  });
}

double singular_cell_by_self_similarity(const Kernel& k, const Eigen::VectorXd& h) {
  const int d = static_cast<int>(h.size());
  double regular = 0.0;
  for (int flat = 0; flat < std::pow(3, d); ++flat) {
    Eigen::VectorXd centre(d);
    int rest = flat;
    bool middle = true;
    for (int a = 0; a < d; ++a) {
      const int m = rest % 3 - 1;
      rest /= 3;
      centre[a] = m * h[a] / 3.0;
      middle = middle && m == 0;
    }
    if (!middle) regular += quadrature_over_cell(k, centre, h / 3.0);
  }
  const double scale = std::pow(3.0, -d);
  if (k.kind == Kernel::Kind::log)
    return (regular + scale * h.prod() * std::log(3.0)) / (1.0 - scale);
  return regular / (1.0 - std::pow(3.0, k.s - d));
}

TEST(FftConvolution, EqualsADirectQuadratureOnSmallGrids) {
  for (const ConvolutionCase& c : small_cases()) {
    if (c.kernel.kind != Kernel::Kind::power && c.kernel.kind != Kernel::Kind::log) continue;
    const Grid grid = box_grid(c.lower, c.upper, c.cells);
    FftConvolution fft(grid, c.kernel);
    const std::vector<double> rho = random_density(grid.size(), 11);
    std::vector<double> fast(grid.size());
    fft.convolve(rho.data(), fast.data());
    const double self = singular_cell_by_self_similarity(c.kernel, grid.spacing());
    double worst = 0.0;
    for (Eigen::Index i = 0; i < grid.size(); ++i) {
      double sum = 0.0;
      for (Eigen::Index j = 0; j < grid.size(); ++j)
        sum += rho[j] * (i == j ? self
                                : quadrature_over_cell(c.kernel, grid.centre(i) - grid.centre(j),
                                                       grid.spacing()));
      worst = std::max(worst, std::abs(sum - fast[i]) / std::abs(sum));
    }
    EXPECT_LT(worst, 1e-9) << c.kernel.describe() << " d=" << grid.dim();
  }
}

// Largest error of W∗ρ (cell averages of ρ in, values at centres out) against a closed form, over
// cells where `inside` holds.
template <class Exact, class Inside>
double potential_error(const Grid& grid, const Kernel& k, const std::vector<double>& averages,
                       Exact exact, Inside inside) {
  FftConvolution fft(grid, k);
  std::vector<double> potential(grid.size());
  fft.convolve(averages.data(), potential.data());
  double worst = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    const Eigen::VectorXd x = grid.centre(c);
    if (inside(x)) worst = std::max(worst, std::abs(potential[c] - exact(x)));
  }
  return worst;
}

TEST(FftConvolution, SemicirclePotentialIsConstantMinusQuadraticOnItsSupport) {
  // 1D log gas, V = x²/2: on |x| ≤ √2 the semicircle satisfies W∗ρ = C − x²/2 with
  // C = 1/2 + log 2 / 2 (docs/exact_solutions.md §1); the error must fall like h².
  const double c = 0.5 + 0.5 * std::log(2.0);
  auto mass_below = [](double x) {  // ∫_{−√2}^x ρ, for exact cell averages
    const double y = std::clamp(x, -std::sqrt(2.0), std::sqrt(2.0));
    return (0.5 * y * std::sqrt(std::max(0.0, 2.0 - y * y)) + std::asin(y / std::sqrt(2.0))) /
               M_PI +
           0.5;
  };
  auto exact = [&](const Eigen::VectorXd& x) { return c - 0.5 * x[0] * x[0]; };
  auto inside = [](const Eigen::VectorXd& x) { return std::abs(x[0]) < 1.3; };
  std::vector<int> cells = {100, 200, 400, 800};
  std::vector<double> errors;
  for (int n : cells) {
    const Grid grid = box_grid(Eigen::VectorXd::Constant(1, -2.0),
                               Eigen::VectorXd::Constant(1, 2.0), Eigen::VectorXi::Constant(1, n));
    std::vector<double> averages(n);
    for (int i = 0; i < n; ++i) {
      const double lo = grid.lower()[0] + i * grid.spacing(0);
      averages[i] = (mass_below(lo + grid.spacing(0)) - mass_below(lo)) / grid.spacing(0);
    }
    errors.push_back(potential_error(grid, Kernel::log(), averages, exact, inside));
  }
  EXPECT_GT(testing::report_orders("semicircle log potential", cells, errors), 1.8);
  for (std::size_t i = 1; i < errors.size(); ++i) EXPECT_LT(errors[i], errors[i - 1]);
}

TEST(FftConvolution, GaussianLogPotentialIn2DConvergesAtSecondOrder) {
  // W = −log|z|, ρ = N(0, σ²I): (W∗ρ)(r) = −log r − E1(r²/2σ²)/2.
  const double sigma = 0.3;
  auto rho = [&](const Eigen::VectorXd& x) {
    return std::exp(-x.squaredNorm() / (2 * sigma * sigma)) / (2 * M_PI * sigma * sigma);
  };
  auto exact = [&](const Eigen::VectorXd& x) {
    const double r2 = x.squaredNorm();
    return -0.5 * std::log(r2) + 0.5 * std::expint(-r2 / (2 * sigma * sigma));
  };
  auto inside = [](const Eigen::VectorXd& x) { return x.norm() < 1.0; };
  std::vector<int> cells = {32, 64, 128};
  std::vector<double> errors;
  for (int n : cells) {
    const Grid grid =
        box_grid(Eigen::Vector2d(-1.6, -1.6), Eigen::Vector2d(1.6, 1.6), Eigen::Vector2i(n, n));
    errors.push_back(potential_error(grid, Kernel::log(), cell_averages(grid, rho), exact, inside));
  }
  EXPECT_GT(testing::report_orders("2D Gaussian log potential", cells, errors), 1.8);
  for (std::size_t i = 1; i < errors.size(); ++i) EXPECT_LT(errors[i], errors[i - 1]);
}

TEST(FftConvolution, GaussianCoulombPotentialIn3DConvergesAtSecondOrder) {
  // W = 1/|z|, ρ = N(0, σ²I): (W∗ρ)(r) = erf(r/(σ√2))/r.
  const double sigma = 0.3;
  auto rho = [&](const Eigen::VectorXd& x) {
    return std::exp(-x.squaredNorm() / (2 * sigma * sigma)) /
           std::pow(2 * M_PI * sigma * sigma, 1.5);
  };
  auto exact = [&](const Eigen::VectorXd& x) {
    const double r = x.norm();
    return std::erf(r / (sigma * std::sqrt(2.0))) / r;
  };
  auto inside = [](const Eigen::VectorXd& x) { return x.norm() < 1.0; };
  std::vector<int> cells = {16, 32, 48};
  std::vector<double> errors;
  for (int n : cells) {
    const Grid grid = box_grid(Eigen::Vector3d::Constant(-1.6), Eigen::Vector3d::Constant(1.6),
                               Eigen::Vector3i::Constant(n));
    errors.push_back(
        potential_error(grid, Kernel::power(1.0), cell_averages(grid, rho), exact, inside));
  }
  EXPECT_GT(testing::report_orders("3D Gaussian Coulomb potential", cells, errors), 1.7);
  for (std::size_t i = 1; i < errors.size(); ++i) EXPECT_LT(errors[i], errors[i - 1]);
}

}  // namespace
}  // namespace cpm
