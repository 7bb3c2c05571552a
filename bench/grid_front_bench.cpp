// Accuracy of the two grid fluxes on discontinuous initial data: a uniform ball of radius 0.5
// spreading under diffusion and the repulsion W = −log|z| (λ = 1, V = 0) in the box [−1.5, 1.5]^d.
// Since z·∇W(z) = −1 the second moment grows at the constant rate λ + 2d/β, so the error of the
// grid's second moment at t_end is known exactly (from the grid's own initial moment). For each
// β and grid: the signed error of both fluxes (first order: Scharfetter–Gummel; second order:
// limited_linear), the ratio of the errors between consecutive grids, the steps and the wall time
// (setup of the FFT convolution included). docs/numerics.md §3.3.
//
//   cmake --build build --target grid_front_bench && OMP_NUM_THREADS=1 build/bin/grid_front_bench
//   build/bin/grid_front_bench 3        # the 3D table only
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "physics/external_potential.hpp"
#include "solvers/grid_density.hpp"
#include "solvers/mckean_vlasov.hpp"

namespace {

using namespace cpm;

struct Result {
  double error = 0.0, seconds = 0.0;
  std::uint64_t steps = 0;
};

// ∫|x|²ρ of the piecewise-constant density (with the within-cell part h²/12 per axis).
double second_moment(const Grid& grid, const std::vector<double>& rho) {
  double sum = 0.0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) sum += rho[c] * grid.centre(c).squaredNorm();
  double within = 0.0;
  for (int a = 0; a < grid.dim(); ++a) within += grid.spacing(a) * grid.spacing(a) / 12.0;
  return grid.cell_volume() * sum + within * density_mass(grid, rho);
}

Result spreading_ball(int d, int cells, double beta, double t_end, Reconstruction scheme) {
  const auto start = std::chrono::steady_clock::now();
  const Grid grid(Domain::whole_space(d), Eigen::VectorXd::Constant(d, -1.5),
                  Eigen::VectorXd::Constant(d, 1.5), Eigen::VectorXi::Constant(d, cells));
  std::vector<double> rho = cell_averages(
      grid, [](const Eigen::VectorXd& x) { return x.norm() < 0.5 ? 1.0 : 0.0; }, d == 3 ? 4 : 8);
  const double mass = density_mass(grid, rho);
  for (double& r : rho) r /= mass;
  const double exact = second_moment(grid, rho) + (1.0 + 2.0 * d / beta) * t_end;
  McKeanVlasovParameters p;
  p.lambda = 1.0;
  p.beta = beta;
  p.reconstruction = scheme;
  McKeanVlasovSolver solver(grid, ZeroPotential(), InteractionKernel::log(), p, std::move(rho));
  solver.advance_to(t_end);
  Result r;
  r.error = second_moment(grid, solver.density()) - exact;
  r.steps = solver.steps_taken();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void table(int d, const std::vector<int>& sizes, const std::vector<double>& betas, double t_end) {
  std::printf(
      "\n%dD spreading ball, t = %g: error of the second moment (signed), ratio to the "
      "next finer grid, steps, wall seconds\n",
      d, t_end);
  std::printf("%6s %6s | %11s %6s %6s %7s | %11s %6s %6s %7s | %9s\n", "beta", "cells", "1st error",
              "ratio", "steps", "s", "2nd error", "ratio", "steps", "s", "1st/2nd");
  for (double beta : betas) {
    std::vector<Result> first, second;
    for (int n : sizes) {
      first.push_back(spreading_ball(d, n, beta, t_end, Reconstruction::first_order));
      second.push_back(spreading_ball(d, n, beta, t_end, Reconstruction::limited_linear));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      auto ratio = [&](const std::vector<Result>& r) {
        return i == 0 ? std::nan("") : std::abs(r[i - 1].error) / std::abs(r[i].error);
      };
      std::printf("%6g %6d | %11.3e %6.2f %6llu %7.2f | %11.3e %6.2f %6llu %7.2f | %9.2f\n", beta,
                  sizes[i], first[i].error, ratio(first),
                  static_cast<unsigned long long>(first[i].steps), first[i].seconds,
                  second[i].error, ratio(second), static_cast<unsigned long long>(second[i].steps),
                  second[i].seconds, std::abs(first[i].error) / std::abs(second[i].error));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : 0;
  if (only == 0 || only == 2) table(2, {32, 64, 128, 256}, {10.0, 30.0, 100.0, 1000.0}, 0.2);
  if (only == 0 || only == 3) {
    table(3, {16, 32, 64}, {10.0, 30.0, 100.0, 1000.0}, 0.05);
    table(3, {32, 64}, {100.0, 1000.0}, 0.2);  // longer: the front has moved 1–2 coarse cells
  }
  return 0;
}
