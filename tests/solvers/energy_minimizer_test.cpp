// The projected minimisers of solvers/energy_minimizer.hpp (docs/numerics.md §3.10):
// - on a box and a disc with W = 1/|z| and no field the equilibria are known exactly (four
//   particles at the corners of the square, three at the vertices of an inscribed equilateral
//   triangle), and Newton, L-BFGS and FIRE reach them from random starts;
// - in a trap all three reach the equilibrium the explicit gradient flow relaxes to, and on the
//   crowded 1D Riesz gas projected onto a ball they and the explicit flow agree, with the two
//   outermost particles held by the wall;
// - on a crowded disc, where many particles end on the wall, L-BFGS's energies decrease and it
//   stops at a constrained equilibrium, along a path that does not depend on the thread count;
// - the proximal problem's minimiser is the drift-implicit step y = Π_D(a − τ F(y)).
#include "solvers/energy_minimizer.hpp"

#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/initial_law.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/gradient_flow.hpp"

namespace cpm {
namespace {

struct Gas {
  Gas(const InteractionKernel& kernel, std::shared_ptr<const ExternalPotential> potential, Domain d)
      : domain(std::move(d)),
        forces(std::move(potential), make_blocked_pair_sum(kernel), 1.0),
        jacobian(forces, domain, make_pair_hessian(kernel)) {}
  Domain domain;
  ForceField forces;
  DriftJacobian jacobian;

  // "lbfgs-identity": L-BFGS without the Jacobian (H₀ = γ I).
  MinimizationResult minimize(Eigen::MatrixXd& x, const std::string& method, double tolerance) {
    const bool identity = method == "lbfgs-identity";
    EnergyMinimizer m(forces, identity ? nullptr : &jacobian, domain,
                      {identity ? MinimizerMethod::lbfgs : enum_from_name<MinimizerMethod>(method),
                       tolerance, 200000, 1e-2});
    return m.minimize(x);
  }
};

Eigen::MatrixXd uniform_start(int d, Eigen::Index n, double radius, std::uint64_t seed) {
  InitialLaw law;
  law.kind = InitialLaw::Kind::uniform_ball;
  law.centre = Eigen::VectorXd::Zero(d);
  law.scale = radius;
  return sample_particles(law, n, seed, 0).positions;
}

Eigen::VectorXd sorted(const Eigen::MatrixXd& x) {
  Eigen::VectorXd v = x.col(0);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(EnergyMinimizer, EveryMethodFindsTheCornersOfTheSquare) {
  // E_N = (1/(2N²)) Σ_{k≠l} 1/|x_k − x_l| with N = 4 at the corners of [−1, 1]²: four sides of 2
  // and two diagonals of 2√2, each pair counted twice.
  const double exact = (4.0 / 2.0 + 2.0 / (2.0 * std::sqrt(2.0))) * 2.0 / (2.0 * 16.0);
  for (const std::string method : {"newton", "lbfgs", "lbfgs-identity", "fire"}) {
    Gas gas(InteractionKernel::power(1.0), std::make_shared<ZeroPotential>(),
            Domain::box(-Eigen::Vector2d::Ones(), Eigen::Vector2d::Ones()));
    Eigen::MatrixXd x = uniform_start(2, 4, 0.5, 3);
    const MinimizationResult r = gas.minimize(x, method, 1e-10);
    ASSERT_TRUE(r.converged) << method << ": " << r.stop_reason;
    EXPECT_NEAR(r.energy, exact, 1e-12) << method;
    EXPECT_LT((x.cwiseAbs().array() - 1.0).abs().maxCoeff(), 1e-9) << method;
  }
}

TEST(EnergyMinimizer, EveryMethodFindsTheTriangleInscribedInTheDisc) {
  // N = 3 on the unit circle at mutual distance √3: E_N = (1/(2·9)) · 6/√3.
  const double exact = 6.0 / std::sqrt(3.0) / 18.0;
  for (const std::string method : {"newton", "lbfgs", "lbfgs-identity", "fire"}) {
    Gas gas(InteractionKernel::power(1.0), std::make_shared<ZeroPotential>(),
            Domain::ball(Eigen::Vector2d::Zero(), 1.0));
    Eigen::MatrixXd x = uniform_start(2, 3, 0.5, 4);
    const MinimizationResult r = gas.minimize(x, method, 1e-10);
    ASSERT_TRUE(r.converged) << method << ": " << r.stop_reason;
    EXPECT_NEAR(r.energy, exact, 1e-12) << method;
    for (Eigen::Index k = 0; k < 3; ++k) EXPECT_NEAR(x.row(k).norm(), 1.0, 1e-12) << method;
  }
}

TEST(EnergyMinimizer, EveryMethodReachesTheEquilibriumOfTheExplicitFlow) {
  // In the trap V = x²/2 the gas spreads to R = 1.40 (docs/exact_solutions.md §1), inside the ball
  // of radius 3; every mode of the flow decays at rate ≥ 1, so that it is at equilibrium to
  // rounding by t = 40.
  const Eigen::Index n = 24;
  const InteractionKernel kernel = InteractionKernel::power(0.5);
  const auto trap = std::make_shared<QuadraticPotential>(1.0);
  const Domain ball = Domain::ball(Eigen::VectorXd::Zero(1), 3.0);
  const Eigen::MatrixXd start = uniform_start(1, n, 0.5, 1);

  ForceField forces(trap, make_blocked_pair_sum(kernel), 1.0);
  GradientFlowIntegrator flow(forces, ball, GradientFlowParameters{1e-12, 1e-10, 1e-3});
  Particles relaxed(start);
  flow.advance_to(relaxed, 40.0);

  for (const std::string method : {"newton", "lbfgs", "lbfgs-identity", "fire"}) {
    Gas gas(kernel, trap, ball);
    Eigen::MatrixXd x = start;
    const MinimizationResult r = gas.minimize(x, method, 1e-10);
    ASSERT_TRUE(r.converged) << method << ": " << r.stop_reason;
    EXPECT_LT((sorted(x) - sorted(relaxed.positions)).cwiseAbs().maxCoeff(), 1e-8) << method;
    EXPECT_LT(x.cwiseAbs().maxCoeff(), 1.4) << method;
  }
}

TEST(EnergyMinimizer, EveryMethodAndTheExplicitFlowAgreeOnTheCrowdedBall) {
  // No field, the unit ball: the wall holds the two outermost particles. The explicit flow's
  // stages are evaluated at projected points, so that it rests on the constrained equilibrium too
  // (unprojected stages left it about 5e-4 off at N = 24).
  const Eigen::Index n = 60;
  const InteractionKernel kernel = InteractionKernel::power(0.5);
  const Domain ball = Domain::ball(Eigen::VectorXd::Zero(1), 1.0);
  const Eigen::MatrixXd start = uniform_start(1, n, 0.5, 1);
  std::vector<Eigen::VectorXd> results;
  for (const std::string method : {"newton", "lbfgs", "lbfgs-identity", "fire"}) {
    Gas gas(kernel, std::make_shared<ZeroPotential>(), ball);
    Eigen::MatrixXd x = start;
    const MinimizationResult r = gas.minimize(x, method, 1e-10);
    ASSERT_TRUE(r.converged) << method << ": " << r.stop_reason;
    results.push_back(sorted(x));
    EXPECT_NEAR(results.back()[0], -1.0, 1e-9) << method;
    EXPECT_NEAR(results.back()[n - 1], 1.0, 1e-9) << method;
    EXPECT_LT(results.back()[n - 2], 1.0 - 1e-4) << method;
  }
  for (std::size_t m = 1; m < results.size(); ++m)
    EXPECT_LT((results[0] - results[m]).cwiseAbs().maxCoeff(), 1e-8) << m;

  ForceField forces(std::make_shared<ZeroPotential>(), make_blocked_pair_sum(kernel), 1.0);
  GradientFlowIntegrator flow(forces, ball, GradientFlowParameters{1e-12, 1e-10, 1e-3});
  Particles relaxed(start);
  flow.advance_to(relaxed, 40.0);
  EXPECT_LT((sorted(relaxed.positions) - results[0]).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(EnergyMinimizer, NewtonEnergiesDecreaseAndTheStopIsOnTheProjectedGradient) {
  Gas gas(InteractionKernel::power(0.5), std::make_shared<QuadraticPotential>(0.5),
          Domain::ball(Eigen::VectorXd::Zero(1), 1.0));
  Eigen::MatrixXd x = uniform_start(1, 200, 0.5, 2);
  EnergyMinimizer m(gas.forces, &gas.jacobian, gas.domain,
                    {MinimizerMethod::newton, 1e-9, 1000, 1e-3});
  std::vector<MinimizerProgress> history;
  const MinimizationResult r =
      m.minimize(x, [&](const MinimizerProgress& p) { history.push_back(p); });
  ASSERT_TRUE(r.converged) << r.stop_reason;
  ASSERT_EQ(history.size(), static_cast<std::size_t>(r.iterations + 1));
  for (std::size_t i = 1; i < history.size(); ++i)
    EXPECT_LE(history[i].energy, history[i - 1].energy * (1 + 1e-12)) << i;
  EXPECT_LE(history.back().gradient_norm, 1e-9);
  EXPECT_GT(history[history.size() - 2].gradient_norm, 1e-9);
  // r is the RMS displacement of one unit projected-gradient step.
  Eigen::MatrixXd drift;
  gas.forces.compute(x, drift, nullptr);
  Eigen::MatrixXd moved = x - drift;
  gas.domain.project_all(moved);
  EXPECT_NEAR(std::sqrt((x - moved).squaredNorm() / 200.0), r.gradient_norm, 1e-15);
}

TEST(EnergyMinimizer, LbfgsOnTheCrowdedDiscStopsAtAConstrainedEquilibrium) {
  // Without a field the gas presses against the wall: about half the particles end on it, each
  // pushed outwards (the force along the normal) with no tangential force left.
  const Eigen::Index n = 150;
  Gas gas(InteractionKernel::power(0.5), std::make_shared<ZeroPotential>(),
          Domain::ball(Eigen::Vector2d::Zero(), 1.0));
  Eigen::MatrixXd x = uniform_start(2, n, 0.5, 6);
  EnergyMinimizer m(gas.forces, &gas.jacobian, gas.domain,
                    {MinimizerMethod::lbfgs, 1e-10, 20000, 1e-3});
  std::vector<MinimizerProgress> history;
  const MinimizationResult r =
      m.minimize(x, [&](const MinimizerProgress& p) { history.push_back(p); });
  ASSERT_TRUE(r.converged) << r.stop_reason;
  for (std::size_t i = 1; i < history.size(); ++i)
    EXPECT_LE(history[i].energy, history[i - 1].energy * (1 + 1e-12)) << i;
  Eigen::MatrixXd drift;
  gas.forces.compute(x, drift, nullptr);
  int on_wall = 0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Vector2d normal = x.row(k).transpose() / x.row(k).norm();
    const Eigen::Vector2d push = -drift.row(k).transpose();
    if (x.row(k).norm() > 1.0 - 1e-12) {
      ++on_wall;
      EXPECT_GT(push.dot(normal), 0.0) << k;
      EXPECT_LT((push - push.dot(normal) * normal).norm(), 1e-8) << k;
    } else {
      EXPECT_LT(push.norm(), 1e-8) << k;
    }
  }
  EXPECT_GT(on_wall, n / 4);
  EXPECT_LT(on_wall, n);
}

TEST(EnergyMinimizer, LbfgsIteratesDoNotDependOnTheThreadCount) {
  // N = 1,600 on the disc: above the size from which the pair sums use every thread; 60
  // iterations take in three renewals of the near-field preconditioner.
  const int saved = omp_get_max_threads();
  std::vector<Eigen::MatrixXd> iterates;
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Gas gas(InteractionKernel::power(0.5), std::make_shared<ZeroPotential>(),
            Domain::ball(Eigen::Vector2d::Zero(), 1.0));
    Eigen::MatrixXd x = uniform_start(2, 1600, 0.5, 8);
    EnergyMinimizer m(gas.forces, &gas.jacobian, gas.domain,
                      {MinimizerMethod::lbfgs, 1e-8, 60, 1e-3});
    EXPECT_EQ(m.minimize(x).stop_reason, "max_iterations");
    iterates.push_back(x);
  }
  omp_set_num_threads(saved);
  EXPECT_TRUE((iterates[0].array() == iterates[1].array()).all());
}

TEST(EnergyMinimizer, ProximalMinimiserIsTheDriftImplicitStep) {
  const double tau = 0.05;
  Gas gas(InteractionKernel::power(0.5), std::make_shared<QuadraticPotential>(1.0),
          Domain::ball(Eigen::Vector2d::Zero(), 0.6));
  const Eigen::MatrixXd anchor = uniform_start(2, 60, 0.6, 5);
  Eigen::MatrixXd y = anchor;
  EnergyMinimizer m(gas.forces, &gas.jacobian, gas.domain,
                    {MinimizerMethod::newton, 1e-12, 100, 1e-3});
  const MinimizationResult r = m.minimize_proximal(y, anchor, tau);
  ASSERT_TRUE(r.converged) << r.stop_reason;
  Eigen::MatrixXd drift;
  gas.forces.compute(y, drift, nullptr);
  Eigen::MatrixXd step = anchor - tau * drift;
  gas.domain.project_all(step);
  EXPECT_LT((step - y).cwiseAbs().maxCoeff(), 1e-10);
}

}  // namespace
}  // namespace cpm
