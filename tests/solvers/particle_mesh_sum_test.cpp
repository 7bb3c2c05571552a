#include "solvers/particle_mesh_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "solvers/blocked_pair_sum.hpp"
#include "tests/solvers/pair_sum_test_support.hpp"

namespace cpm {
namespace {

// m^d particles on a jittered lattice in [−1, 1]^d: no two closer than 0.6 lattice spacings,
// so refining the grid reaches the regime where every pair is many cells apart. There the
// corrected sum (default near range) has no near pairs, and the tests below measure the mesh's
// own convergence, which is what the corrected sum uses beyond the near range.
Eigen::MatrixXd jittered_lattice(int m, int d, std::uint64_t seed) {
  const Eigen::MatrixXd jitter = test::random_points(std::lround(std::pow(m, d)), d, seed, 0.2);
  Eigen::MatrixXd x(jitter.rows(), d);
  const double spacing = 2.0 / m;
  for (Eigen::Index k = 0; k < x.rows(); ++k)
    for (int a = 0, rest = static_cast<int>(k); a < d; ++a, rest /= m)
      x(k, a) = -1.0 + (rest % m + 0.5 + jitter(k, a)) * spacing;
  return x;
}

struct MeshError {
  double gradient, energy;
};

// Relative errors of the mesh sum on a grid of spacing 2 / cells_inside against the direct sum.
MeshError mesh_error(const InteractionKernel& kernel, const Eigen::MatrixXd& x, int cells_inside) {
  const int d = static_cast<int>(x.cols());
  auto direct = make_blocked_pair_sum(kernel);
  auto mesh = make_particle_mesh_sum(
      kernel, Eigen::VectorXd::Constant(d, -1.0), Eigen::VectorXd::Constant(d, 1.0),
      Eigen::VectorXi::Constant(d, cells_inside + 4), default_near_cells(d));
  Eigen::MatrixXd g_direct(x.rows(), d), g_mesh(x.rows(), d);
  double e_direct = 0.0, e_mesh = 0.0;
  direct->compute(x, g_direct, &e_direct);
  mesh->compute(x, g_mesh, &e_mesh);
  return {test::relative_error(g_mesh, g_direct), test::relative_error(e_mesh, e_direct)};
}

// Refines the grid by factors of two, prints the errors and observed orders, and checks that
// the gradient error falls at second order (observed order at least 1.6 on each of the last two
// refinements).
void expect_second_order_convergence(const InteractionKernel& kernel, const Eigen::MatrixXd& x,
                                     int coarsest, int levels, double finest_tolerance) {
  std::printf("mesh vs direct, %s, d = %d, N = %ld\n", kernel.describe().c_str(),
              static_cast<int>(x.cols()), static_cast<long>(x.rows()));
  std::printf("%8s %14s %8s %14s %8s\n", "cells", "force error", "order", "energy error", "order");
  std::vector<MeshError> errors;
  for (int level = 0; level < levels; ++level) {
    const int cells = coarsest << level;
    errors.push_back(mesh_error(kernel, x, cells));
    const MeshError& e = errors.back();
    if (level == 0) {
      std::printf("%8d %14.3e %8s %14.3e %8s\n", cells, e.gradient, "", e.energy, "");
    } else {
      const MeshError& c = errors[level - 1];
      std::printf("%8d %14.3e %8.2f %14.3e %8.2f\n", cells, e.gradient,
                  std::log2(c.gradient / e.gradient), e.energy, std::log2(c.energy / e.energy));
    }
  }
  for (int level = levels - 2; level < levels; ++level)
    EXPECT_GE(std::log2(errors[level - 1].gradient / errors[level].gradient), 1.6)
        << "refinement to " << (coarsest << level) << " cells";
  EXPECT_LT(errors.back().gradient, finest_tolerance);
  EXPECT_LT(errors.back().energy, finest_tolerance);
}

TEST(ParticleMeshSum, ForceConvergesToTheDirectSumAtSecondOrderForRieszHalfIn1D) {
  expect_second_order_convergence(InteractionKernel::power(0.5), jittered_lattice(40, 1, 11), 256,
                                  6, 1e-4);
}

TEST(ParticleMeshSum, ForceConvergesToTheDirectSumAtSecondOrderForLogIn2D) {
  expect_second_order_convergence(InteractionKernel::log(), jittered_lattice(6, 2, 12), 32, 4,
                                  1e-3);
}

// With the particle's own share removed, a lone particle feels no force and has no pair energy:
// here for the plain mesh (near range −1, whose self term is removed on its own); the corrected
// mesh meets the same contract in interaction_sum_test.
TEST(ParticleMeshSum, SelfTermIsExcludedByThePlainMesh) {
  for (int d : {1, 2, 3}) {
    auto mesh = make_particle_mesh_sum(
        InteractionKernel::power(0.5), Eigen::VectorXd::Constant(d, -1.0),
        Eigen::VectorXd::Constant(d, 1.0), Eigen::VectorXi::Constant(d, 20), -1);
    Eigen::MatrixXd x = test::random_points(1, d, 4, 0.9), g(1, d);
    double energy = 1.0;
    mesh->compute(x, g, &energy);
    EXPECT_LT(g.norm(), 1e-12) << "d=" << d;
    EXPECT_LT(std::abs(energy), 1e-12) << "d=" << d;
  }
}

TEST(ParticleMeshSum, ParticleOutsideTheMeshBoxIsAnError) {
  auto mesh = make_particle_mesh_sum(InteractionKernel::log(), Eigen::VectorXd::Constant(2, -1.0),
                                     Eigen::VectorXd::Constant(2, 1.0),
                                     Eigen::VectorXi::Constant(2, 16), default_near_cells(2));
  Eigen::MatrixXd x(2, 2), g(2, 2);
  x << 0.0, 0.0, 0.0, 1.5;
  EXPECT_THROW(mesh->compute(x, g, nullptr), std::out_of_range);
}

TEST(ParticleMeshSum, DefaultGridHasAboutFourParticlesPerCellIn2D) {
  EXPECT_EQ(default_mesh_cells(1'000'000, 2), Eigen::VectorXi::Constant(2, 512));
  EXPECT_EQ(default_mesh_cells(1'000'000, 3), Eigen::VectorXi::Constant(3, 64));
  EXPECT_EQ(default_mesh_cells(10, 1), Eigen::VectorXi::Constant(1, 32));
}

}  // namespace
}  // namespace cpm
