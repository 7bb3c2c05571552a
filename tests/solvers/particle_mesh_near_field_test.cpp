#include "solvers/particle_mesh_near_field.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/particle_mesh_sum.hpp"
#include "tests/solvers/pair_sum_test_support.hpp"

namespace cpm {
namespace {

using test::evaluate;
using test::PairSumResult;

std::unique_ptr<InteractionSum> mesh_on_unit_box(const InteractionKernel& kernel, Eigen::Index n,
                                                 int d, int near_cells) {
  return make_particle_mesh_sum(kernel, Eigen::VectorXd::Constant(d, -1.0),
                                Eigen::VectorXd::Constant(d, 1.0), default_mesh_cells(n, d),
                                near_cells);
}

// n points in [−1, 1]^d: half uniform, half in a Gaussian cluster of width 0.1 around
// (0.3, …) (clipped to the box), so that some cells hold tens of particles.
Eigen::MatrixXd clustered_points(Eigen::Index n, int d, std::uint64_t seed) {
  Eigen::MatrixXd x = test::random_points(n, d, seed);
  for (Eigen::Index k = 0; k < n / 2; ++k) {
    RandomStream s(seed + 1, RandomPurpose::test_inputs, 0, static_cast<std::uint64_t>(k));
    for (int a = 0; a < d; ++a) x(k, a) = std::clamp(0.3 + 0.1 * s.normal(), -0.99, 0.99);
  }
  return x;
}

// Relative gradient error (Frobenius) and energy error of the mesh with the given near range
// against the direct sum.
struct Errors {
  double gradient, energy;
};
Errors mesh_errors(const InteractionKernel& kernel, const Eigen::MatrixXd& x,
                   const PairSumResult& direct, int near_cells) {
  const PairSumResult mesh =
      evaluate(*mesh_on_unit_box(kernel, x.rows(), static_cast<int>(x.cols()), near_cells), x);
  return {test::relative_error(mesh.gradient, direct.gradient),
          test::relative_error(mesh.energy, direct.energy)};
}

// The 2D log gas at 2·10⁴ particles on the default 64² grid (about five per cell): the plain
// mesh smooths every pair within a few cells (force error 3·10⁻² uniform, 6·10⁻² clustered);
// with the near pairs exact, what is left is the mesh's error for pairs more than R cells
// apart, which falls as R grows (measured at R = 1, 2, 3: uniform 2.0, 0.46, 0.26·10⁻³;
// clustered 9.5, 2.3, 1.8·10⁻³). In 2D the log kernel is harmonic, so the mesh's smoothing
// barely biases the far pairs' energy.
TEST(ParticleMeshNearField, CorrectedLogForceIn2DIsWithin1e3OfTheDirectSumAndBeatsThePlainMesh) {
  const InteractionKernel log_kernel = InteractionKernel::log();
  for (const bool clustered : {false, true}) {
    const Eigen::MatrixXd x =
        clustered ? clustered_points(20000, 2, 3) : test::random_points(20000, 2, 3);
    const PairSumResult direct = evaluate(*make_blocked_pair_sum(log_kernel), x);
    const Errors plain = mesh_errors(log_kernel, x, direct, -1);
    std::printf("%s: plain force %.3e energy %.3e\n", clustered ? "clustered" : "uniform",
                plain.gradient, plain.energy);
    double previous = plain.gradient;
    for (int near_cells : {1, 2, 3}) {
      const Errors e = mesh_errors(log_kernel, x, direct, near_cells);
      std::printf("  near %d: force %.3e energy %.3e\n", near_cells, e.gradient, e.energy);
      EXPECT_LT(e.gradient, previous) << "near " << near_cells;
      previous = e.gradient;
      if (near_cells >= 2) {
        EXPECT_LT(e.gradient, plain.gradient / 20) << "near " << near_cells;
        EXPECT_LT(e.gradient, clustered ? 3e-3 : 1e-3) << "near " << near_cells;
        EXPECT_LT(e.energy, 3e-5) << "near " << near_cells;
      }
    }
  }
}

// Every Riesz-family kernel the mesh integrates, in d = 1, 2, 3, at the default near range: never
// worse than the plain mesh, and within the stated tolerance. In 1D and 2D the near field
// dominates the plain mesh's error for the singular kernels (factors 10–10⁵ gained); the
// mollified kernel (ε = 0.05, several cells) is smooth on the mesh scale and gains little. In
// 3D on the default 32³ grid (0.3 particles per cell) the far pairs' second-order error is of
// the same size, so the log kernel gains only a factor of 2 there. Energies are printed, not
// checked: the mesh's smoothing biases the energy of the pairs just beyond the near range
// (by about (5h²/24) ΔW), which in the plain mesh the opposite bias of the near pairs partly
// cancelled, so for some kernels (2D Riesz s = 1.3, 1D log) the corrected energy is further
// from the direct sum than the plain mesh's.
TEST(ParticleMeshNearField, CorrectedForceIsWithinToleranceForEveryKernelIn1D2D3D) {
  struct Case {
    int d;
    Eigen::Index n;
    double tolerance;
  };
  for (const Case& c : {Case{1, 4000, 1e-3}, Case{2, 8000, 1e-2}, Case{3, 8000, 1e-2}}) {
    std::vector<InteractionKernel> kernels = {InteractionKernel::log(),
                                              InteractionKernel::power(0.5),
                                              InteractionKernel::mollified(0.5, 0.05)};
    if (c.d == 1) kernels.push_back(InteractionKernel::linear());
    if (c.d >= 2) kernels.push_back(InteractionKernel::power(1.3));
    if (c.d == 3) kernels.push_back(InteractionKernel::power(1.0));
    const Eigen::MatrixXd x = test::random_points(c.n, c.d, 8);
    for (const InteractionKernel& kernel : kernels) {
      const PairSumResult direct = evaluate(*make_blocked_pair_sum(kernel), x);
      const Errors plain = mesh_errors(kernel, x, direct, -1);
      const Errors corrected = mesh_errors(kernel, x, direct, default_near_cells(c.d));
      std::printf(
          "d = %d, %s: force plain %.3e, corrected %.3e; energy plain %.3e, corrected %.3e\n", c.d,
          kernel.describe().c_str(), plain.gradient, corrected.gradient, plain.energy,
          corrected.energy);
      EXPECT_LT(corrected.gradient, c.tolerance) << kernel.describe() << " d=" << c.d;
      EXPECT_LE(corrected.gradient, plain.gradient) << kernel.describe() << " d=" << c.d;
    }
  }
}

// Pairs within the near range are summed exactly: a cluster that fits in one cell's
// neighbourhood gets the direct sum's force and energy to rounding.
TEST(ParticleMeshNearField, ClusterWithinTheNearRangeGetsTheDirectSum) {
  for (int d : {1, 2, 3}) {
    const Eigen::MatrixXd x = test::random_points(40, d, 6, 0.04);  // within ±0.04 of 0
    const InteractionKernel kernel = InteractionKernel::power(0.5);
    auto mesh = make_particle_mesh_sum(kernel, Eigen::VectorXd::Constant(d, -1.0),
                                       Eigen::VectorXd::Constant(d, 1.0),
                                       Eigen::VectorXi::Constant(d, 24), 2);  // h = 0.1
    const PairSumResult direct = evaluate(*make_blocked_pair_sum(kernel), x);
    const PairSumResult corrected = evaluate(*mesh, x);
    EXPECT_LT(test::relative_error(corrected.gradient, direct.gradient), 1e-12) << "d=" << d;
    EXPECT_LT(test::relative_error(corrected.energy, direct.energy), 1e-12) << "d=" << d;
  }
}

// Built and evaluated once on one thread, then evaluated again on two (in that order, so that no
// serial set-up runs beside idle OpenMP workers spinning on a shared machine).
TEST(ParticleMeshNearField, ResultsAreBitwiseIndependentOfTheThreadCount) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  struct Case {
    int d, near_cells;
    Eigen::MatrixXd x;
    std::unique_ptr<InteractionSum> mesh;
    PairSumResult one;
  };
  std::vector<Case> cases;
  for (int d : {1, 2, 3})
    for (int near_cells : {-1, 1, 2}) {
      Case c{d, near_cells, clustered_points(6000, d, 9), nullptr, {}};
      c.mesh = mesh_on_unit_box(InteractionKernel::log(), c.x.rows(), d, near_cells);
      c.one = evaluate(*c.mesh, c.x);
      cases.push_back(std::move(c));
    }
  omp_set_num_threads(2);
  for (Case& c : cases) {
    const PairSumResult two = evaluate(*c.mesh, c.x);
    EXPECT_EQ(two.gradient, c.one.gradient) << "d=" << c.d << " near " << c.near_cells;
    EXPECT_EQ(two.energy, c.one.energy) << "d=" << c.d << " near " << c.near_cells;
  }
  omp_set_num_threads(threads);
}

// The pair energy Σ_{k≠l} W has ∂/∂x_k = 2 Σ_l ∇W(x_k − x_l): along the gradient v itself,
// (E(x + εv) − E(x − εv)) / 2ε = 2 ‖v‖². The corrected mesh energy satisfies it to the mesh's
// accuracy; the plain mesh does not, since a particle's own deposit leaves a self energy that
// varies within a cell while the self force is removed.
TEST(ParticleMeshNearField, CorrectedEnergyDerivativeAlongTheGradientIsTwiceItsSquaredNorm) {
  const InteractionKernel log_kernel = InteractionKernel::log();
  const Eigen::MatrixXd x = test::random_points(5000, 2, 10, 0.95);
  auto relation_error = [&](int near_cells) {
    auto mesh = mesh_on_unit_box(log_kernel, x.rows(), 2, near_cells);
    const PairSumResult at = evaluate(*mesh, x);
    const double eps = 1e-7 / at.gradient.cwiseAbs().maxCoeff();  // moves ≤ 1e-7
    const double up = evaluate(*mesh, x + eps * at.gradient).energy;
    const double down = evaluate(*mesh, x - eps * at.gradient).energy;
    const double expected = 2.0 * at.gradient.squaredNorm();
    return std::abs((up - down) / (2.0 * eps) - expected) / expected;
  };
  const double plain = relation_error(-1), corrected = relation_error(default_near_cells(2));
  std::printf("energy-force relation: plain %.3e, corrected %.3e\n", plain, corrected);
  EXPECT_LT(corrected, 1e-3);
  EXPECT_LT(corrected, plain);
}

// The response map reproduces the full mesh for a single deposit: the plain mesh with one
// particle has its self term removed exactly (see particle_mesh_sum_test), and a pair one cell
// apart, corrected, gets the exact pair force.
TEST(ParticleMeshNearField, PairOneCellApartGetsTheExactForce) {
  for (int d : {1, 2, 3}) {
    Eigen::MatrixXd x = Eigen::MatrixXd::Constant(2, d, 0.013);
    x(1, 0) += 0.12;
    const InteractionKernel kernel = InteractionKernel::log();
    auto mesh = make_particle_mesh_sum(kernel, Eigen::VectorXd::Constant(d, -1.0),
                                       Eigen::VectorXd::Constant(d, 1.0),
                                       Eigen::VectorXi::Constant(d, 24), 1);
    const PairSumResult direct = evaluate(*make_blocked_pair_sum(kernel), x);
    const PairSumResult corrected = evaluate(*mesh, x);
    EXPECT_LT(test::relative_error(corrected.gradient, direct.gradient), 1e-12) << "d=" << d;
    EXPECT_LT(test::relative_error(corrected.energy, direct.energy), 1e-12) << "d=" << d;
  }
}

TEST(ParticleMeshNearField, NearRangeOutsideMinusOneToThreeIsAnError) {
  const Eigen::VectorXd lower = Eigen::VectorXd::Constant(2, -1.0), upper = -lower;
  const Eigen::VectorXi cells = Eigen::VectorXi::Constant(2, 16);
  for (int near_cells : {-2, 4})
    EXPECT_THROW(make_particle_mesh_sum(InteractionKernel::log(), lower, upper, cells, near_cells),
                 std::invalid_argument);
}

}  // namespace
}  // namespace cpm
