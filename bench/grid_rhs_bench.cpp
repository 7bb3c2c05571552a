// Cost of the McKean–Vlasov grid solver: one right-hand-side evaluation (W∗ρ by zero-padded FFT,
// face fluxes, divergence) and one full SSP-RK3 step, with the first-order and the second-order
// (limited_linear) flux, for 1D grids of M = 1,024..65,536 cells and 2D grids of 64²..1,024²
// cells. Prints wall and CPU time per call (and of W∗ρ alone), the CPU-time ratio of the two
// right-hand sides, the ratio of the second-order CPU time / (M log2 M) to that of the smallest
// grid of the same dimension (1 means M log M growth), and the FFT convolution alone with
// FFTW_ESTIMATE and FFTW_MEASURE plans. The solver plans with FftPlanning::automatic
// (FFTW_MEASURE from 512² cells in 2D).
//
//   cmake --build build --target grid_rhs_bench && build/bin/grid_rhs_bench
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

#include "bench/instruction_set.hpp"
#include "physics/external_potential.hpp"
#include "solvers/fft_convolution.hpp"
#include "solvers/grid_density.hpp"
#include "solvers/mckean_vlasov.hpp"

namespace {

using namespace cpm;
using Clock = std::chrono::steady_clock;

struct Cost {
  double wall = 0.0, cpu = 0.0;  // seconds per call; cpu sums over threads
};

// Median over 5 rounds, each averaging enough calls to last ~50 ms. The machine may be shared:
// process CPU time is much less sensitive to other load than wall time.
Cost cost_per_call(const std::function<void()>& f) {
  f();  // warm-up
  const auto start = Clock::now();
  f();
  const double once = std::chrono::duration<double>(Clock::now() - start).count();
  const int calls = std::max(1, static_cast<int>(0.05 / std::max(once, 1e-9)));
  std::vector<double> wall, cpu;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    for (int i = 0; i < calls; ++i) f();
    cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / calls);
    wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / calls);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[2], cpu[2]};
}

Grid ball_grid(int d, int n) {
  return Grid::over_domain(Domain::ball(Eigen::VectorXd::Zero(d), 3.0),
                           Eigen::VectorXi::Constant(d, n));
}

std::vector<double> gaussian_density(const Grid& grid) {
  std::vector<double> rho = cell_averages(
      grid, [](const Eigen::VectorXd& x) { return std::exp(-0.5 * x.squaredNorm()); }, 2);
  const double mass = density_mass(grid, rho);
  for (double& r : rho) r /= mass;
  return rho;
}

McKeanVlasovParameters scheme(Reconstruction reconstruction) {
  McKeanVlasovParameters p;
  p.lambda = 1.0;
  p.beta = 10.0;
  p.reconstruction = reconstruction;
  return p;
}

void run_dimension(int d, const std::vector<int>& sizes, const InteractionKernel& kernel) {
  std::printf("\n%dD, kernel %s, beta = 10, ball of radius 3 (times in ms: wall / cpu)\n", d,
              kernel.describe().c_str());
  std::printf("%8s %9s %17s %17s %17s %7s %17s %17s %11s\n", "cells", "M", "W*rho", "rhs 1st",
              "rhs 2nd", "2nd/1st", "step 1st", "step 2nd", "rhs2/MlogM");
  double rhs_base = 0.0;
  for (int n : sizes) {
    const Grid grid = ball_grid(d, n);
    const double m = static_cast<double>(grid.size());
    McKeanVlasovSolver first(grid, QuadraticPotential(1.0), kernel,
                             scheme(Reconstruction::first_order), gaussian_density(grid));
    McKeanVlasovSolver second(grid, QuadraticPotential(1.0), kernel,
                              scheme(Reconstruction::limited_linear), gaussian_density(grid));
    std::vector<double> derivative(grid.size());
    const std::vector<double> rho = first.density();
    FftConvolution convolution(grid, kernel);
    std::vector<double> potential(grid.size());
    const Cost convolve =
        cost_per_call([&] { convolution.convolve(rho.data(), potential.data()); });
    const Cost rhs1 = cost_per_call([&] { first.rhs(rho, derivative); });
    const Cost rhs2 = cost_per_call([&] { second.rhs(rho, derivative); });
    const Cost step1 = cost_per_call([&] { first.step(); });
    const Cost step2 = cost_per_call([&] { second.step(); });
    // Growth against M log M from the CPU times, relative to the smallest grid.
    const double scale = m * std::log2(m);
    if (rhs_base == 0.0) rhs_base = rhs2.cpu / scale;
    std::printf(
        "%8s %9.0f %8.3f /%7.3f %8.3f /%7.3f %8.3f /%7.3f %7.2f %8.3f /%7.3f %8.3f /%7.3f %11.2f\n",
        (std::to_string(n) + (d == 2 ? "^2" : "")).c_str(), m, 1e3 * convolve.wall,
        1e3 * convolve.cpu, 1e3 * rhs1.wall, 1e3 * rhs1.cpu, 1e3 * rhs2.wall, 1e3 * rhs2.cpu,
        rhs2.cpu / rhs1.cpu, 1e3 * step1.wall, 1e3 * step1.cpu, 1e3 * step2.wall, 1e3 * step2.cpu,
        rhs2.cpu / scale / rhs_base);
  }
}

void run_planning(int n) {
  const Grid grid = ball_grid(2, n);
  const std::vector<double> rho = gaussian_density(grid);
  std::vector<double> potential(grid.size());
  std::printf("\nFFT convolution alone, 2D %d^2 (padded %d^2)\n", n, 2 * n);
  for (const auto planning : {FftPlanning::estimate, FftPlanning::measure}) {
    const auto t0 = Clock::now();
    FftConvolution convolution(grid, InteractionKernel::log(), planning);
    const double setup = std::chrono::duration<double>(Clock::now() - t0).count();
    const Cost call = cost_per_call([&] { convolution.convolve(rho.data(), potential.data()); });
    std::printf("  %-8s setup %6.2f s   convolve %8.3f ms wall / %8.3f ms cpu\n",
                planning == FftPlanning::estimate ? "estimate" : "measure", setup, 1e3 * call.wall,
                1e3 * call.cpu);
  }
}

}  // namespace

int main() {
  cpm::print_instruction_set();
  std::printf("grid_rhs_bench: %d OpenMP threads\n", omp_get_max_threads());
  run_planning(512);  // first: FFTW reuses the wisdom of measured plans in later plans
  run_dimension(1, {1024, 4096, 16384, 65536}, InteractionKernel::log());
  run_dimension(2, {64, 128, 256, 512, 1024}, InteractionKernel::log());
  return 0;
}
