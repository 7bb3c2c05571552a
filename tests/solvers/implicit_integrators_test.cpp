// The linearly implicit integrators of solvers/implicit_integrators.hpp (docs/numerics.md §3.9):
// - order: on a smooth problem (mollified repulsion in a quadratic trap) ROS3P with fixed steps
//   converges at third order and the drift-implicit Euler step (implicit Langevin at β = ∞) at
//   first order;
// - stability: on the crowded 1D Riesz gas (s = 0.5, projected onto a ball) the adaptive steps
//   end far above the explicit stability bound while the particles stay in D and in order and the
//   energy decreases;
// - the adaptive ROS3P flow relaxes to the equilibrium the Newton minimiser finds;
// - a restored state continues bit for bit, and results do not depend on the thread count.
#include "solvers/implicit_integrators.hpp"

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
};

Gas smooth_gas(int d) {
  return Gas(InteractionKernel::mollified(1.0, 0.5), std::make_shared<QuadraticPotential>(1.0),
             Domain::whole_space(d));
}

Gas crowded_gas() {
  return Gas(InteractionKernel::power(0.5), std::make_shared<ZeroPotential>(),
             Domain::ball(Eigen::VectorXd::Zero(1), 1.0));
}

Particles start(int d, Eigen::Index n, double radius) {
  InitialLaw law;
  law.kind = InitialLaw::Kind::uniform_ball;
  law.centre = Eigen::VectorXd::Zero(d);
  law.scale = radius;
  return sample_particles(law, n, 1, 0);
}

Eigen::MatrixXd rosenbrock(Gas& gas, const Particles& from, double t, double fixed_step) {
  ImplicitGradientFlowParameters p;
  p.fixed_step = fixed_step;
  p.linear_tolerance = 1e-6;
  ImplicitGradientFlowIntegrator flow(gas.forces, gas.jacobian, gas.domain, p);
  Particles x = from;
  flow.advance_to(x, t);
  return x.positions;
}

Eigen::MatrixXd implicit_euler(Gas& gas, const Particles& from, double t, double step) {
  ImplicitLangevinIntegrator euler(
      gas.forces, gas.jacobian, gas.domain,
      {step, std::numeric_limits<double>::infinity(), 1, 0, 1e-13, 100});
  Particles x = from;
  euler.advance_to(x, t);
  return x.positions;
}

Eigen::MatrixXd reference_flow(Gas& gas, const Particles& from, double t) {
  GradientFlowIntegrator flow(gas.forces, gas.domain, GradientFlowParameters{1e-14, 1e-13, 1e-4});
  Particles x = from;
  flow.advance_to(x, t);
  return x.positions;
}

double observed_order(const std::vector<double>& errors) {
  return std::log2(errors[errors.size() - 2] / errors.back());
}

TEST(ImplicitIntegrators, RosenbrockFlowIsThirdOrderAndImplicitEulerFirstOrderOnASmoothProblem) {
  for (const int d : {1, 2}) {
    Gas gas = smooth_gas(d);
    const Particles from = start(d, 12, 1.5);
    const Eigen::MatrixXd exact = reference_flow(gas, from, 1.0);
    std::vector<double> ros3p, euler;
    for (const double h : {0.1, 0.05, 0.025}) {
      ros3p.push_back((rosenbrock(gas, from, 1.0, h) - exact).cwiseAbs().maxCoeff());
      euler.push_back((implicit_euler(gas, from, 1.0, h) - exact).cwiseAbs().maxCoeff());
    }
    std::printf(
        "d=%d ROS3P errors %.3e %.3e %.3e (order %.2f); implicit Euler %.3e %.3e %.3e "
        "(order %.2f)\n",
        d, ros3p[0], ros3p[1], ros3p[2], observed_order(ros3p), euler[0], euler[1], euler[2],
        observed_order(euler));
    EXPECT_NEAR(observed_order(ros3p), 3.0, 0.3) << "d=" << d;
    EXPECT_NEAR(observed_order(euler), 1.0, 0.1) << "d=" << d;
  }
}

// The largest eigenvalue of the drift's Jacobian at x, by power iteration: an explicit step is
// stable only below 2/λ_max.
double largest_eigenvalue(Gas& gas, const Eigen::MatrixXd& x) {
  Eigen::MatrixXd drift, v = Eigen::MatrixXd::Ones(x.rows(), x.cols()), jv;
  for (Eigen::Index k = 0; k < x.rows(); ++k) v(k, 0) = (k % 2 == 0 ? 1.0 : -1.0) * (1.0 + k);
  gas.forces.compute(x, drift, nullptr);
  gas.jacobian.linearise(x, drift, drift);
  double lambda = 0.0;
  for (int i = 0; i < 300; ++i) {
    v /= v.norm();
    gas.jacobian.apply(v, jv, 0.0);
    lambda = (v.array() * jv.array()).sum();
    v = jv;
  }
  return lambda;
}

TEST(ImplicitIntegrators, StepsOnTheCrowdedBallFarExceedTheExplicitStabilityBound) {
  // N = 200: at equilibrium the spacing at the wall is about 1e-3. The adaptive ROS3P flow keeps
  // the particles in D and in order and lowers the energy at every output, with steps that end
  // hundreds of times above the explicit bound 2/λ_max.
  const Eigen::Index n = 200;
  Gas gas = crowded_gas();
  Particles x = start(1, n, 0.5);
  ImplicitGradientFlowIntegrator flow(gas.forces, gas.jacobian, gas.domain, {});
  IntegratorProgress last;
  flow.set_observer([&](const IntegratorProgress& p) { last = p; });
  double energy = gas.forces.energy(x.positions).total();
  std::vector<Eigen::Index> order(n);
  for (Eigen::Index k = 0; k < n; ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index a, Eigen::Index b) { return x.positions(a, 0) < x.positions(b, 0); });
  for (int output = 1; output <= 10; ++output) {
    flow.advance_to(x, 0.3 * output);
    ASSERT_TRUE(x.positions.allFinite()) << output;
    EXPECT_LE(x.positions.cwiseAbs().maxCoeff(), 1.0) << output;
    for (Eigen::Index i = 0; i + 1 < n; ++i)
      ASSERT_LT(x.positions(order[i], 0), x.positions(order[i + 1], 0)) << output;
    const double next = gas.forces.energy(x.positions).total();
    EXPECT_LE(next, energy * (1 + 1e-14)) << output;
    energy = next;
  }
  EXPECT_EQ(x.positions.cwiseAbs().maxCoeff(), 1.0);  // the wall holds the outermost particles
  const double explicit_bound = 2.0 / largest_eigenvalue(gas, x.positions);
  std::printf("N=%ld: %lu steps to t = 3, last step %.3e, explicit bound %.3e\n",
              static_cast<long>(n), static_cast<unsigned long>(flow.steps_taken()), last.step,
              explicit_bound);
  EXPECT_GT(last.step, 100.0 * explicit_bound);

  // The drift-implicit Euler–Maruyama step with noise, at a step 1e4 times the explicit bound,
  // stays finite and in D.
  Particles noisy = start(1, n, 0.5);
  ImplicitLangevinIntegrator langevin(gas.forces, gas.jacobian, gas.domain,
                                      {1e4 * explicit_bound, 1e4, 3, 0, 1e-9, 100});
  langevin.advance_to(noisy, 20 * 1e4 * explicit_bound);
  EXPECT_EQ(langevin.steps_taken(), 20u);
  EXPECT_TRUE(noisy.positions.allFinite());
  EXPECT_LE(noisy.positions.cwiseAbs().maxCoeff(), 1.0);
}

TEST(ImplicitIntegrators, AdaptiveRosenbrockFlowReachesTheMinimisersEquilibrium) {
  // With the trap V = x²/2 every mode decays at rate ≥ 1 (see energy_minimizer_test.cpp).
  const Eigen::Index n = 40;
  Gas gas(InteractionKernel::power(0.5), std::make_shared<QuadraticPotential>(1.0),
          Domain::ball(Eigen::VectorXd::Zero(1), 1.0));
  const Particles from = start(1, n, 0.5);
  ImplicitGradientFlowParameters p;
  p.absolute_tolerance = 1e-10;
  p.relative_tolerance = 1e-8;
  ImplicitGradientFlowIntegrator flow(gas.forces, gas.jacobian, gas.domain, p);
  Particles relaxed = from;
  flow.advance_to(relaxed, 40.0);

  Eigen::MatrixXd minimum = from.positions;
  EnergyMinimizer newton(gas.forces, &gas.jacobian, gas.domain,
                         {MinimizerMethod::newton, 1e-11, 1000, 1e-3});
  ASSERT_TRUE(newton.minimize(minimum).converged);
  auto sorted = [](const Eigen::MatrixXd& x) {
    Eigen::VectorXd v = x.col(0);
    std::sort(v.begin(), v.end());
    return v;
  };
  // ROS3P is A-stable but not L-stable (docs/numerics.md §3.9): at the long steps it takes near
  // the equilibrium it damps the residual slowly, which leaves the flow about 1e-8 from it in r.
  EXPECT_LT((sorted(relaxed.positions) - sorted(minimum)).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(ImplicitIntegrators, RestoredStateContinuesBitForBit) {
  Gas gas = crowded_gas();
  const Particles from = start(1, 60, 0.5);
  ImplicitGradientFlowIntegrator whole(gas.forces, gas.jacobian, gas.domain, {});
  Particles a = from;
  whole.advance_to(a, 0.2);
  const IntegratorState saved = whole.save_state();
  const Eigen::MatrixXd at_save = a.positions;
  whole.advance_to(a, 0.5);

  ImplicitGradientFlowIntegrator resumed(gas.forces, gas.jacobian, gas.domain, {});
  resumed.restore_state(saved);
  Particles b(at_save);
  resumed.advance_to(b, 0.5);
  EXPECT_TRUE((a.positions.array() == b.positions.array()).all());
  EXPECT_EQ(whole.steps_taken(), resumed.steps_taken());
}

TEST(ImplicitIntegrators, ResultsDoNotDependOnTheThreadCount) {
  // N = 1,600: above the size from which pair sums and Hessian products use every thread.
  const int saved = omp_get_max_threads();
  std::vector<Eigen::MatrixXd> flows, minima;
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Gas gas = crowded_gas();
    const Particles from = start(1, 1600, 0.5);
    ImplicitGradientFlowIntegrator flow(gas.forces, gas.jacobian, gas.domain, {});
    Particles x = from;
    flow.advance_to(x, 1e-3);
    flows.push_back(x.positions);
    Eigen::MatrixXd minimum = from.positions;
    EnergyMinimizer newton(gas.forces, &gas.jacobian, gas.domain,
                           {MinimizerMethod::newton, 1e-8, 1000, 1e-3});
    ASSERT_TRUE(newton.minimize(minimum).converged);
    minima.push_back(minimum);
  }
  omp_set_num_threads(saved);
  EXPECT_TRUE((flows[0].array() == flows[1].array()).all());
  EXPECT_TRUE((minima[0].array() == minima[1].array()).all());
}

TEST(ImplicitIntegrators, ObserverSeesEveryAcceptedStep) {
  Gas gas = smooth_gas(1);
  ImplicitGradientFlowIntegrator flow(gas.forces, gas.jacobian, gas.domain, {});
  std::vector<IntegratorProgress> seen;
  flow.set_observer([&](const IntegratorProgress& p) { seen.push_back(p); });
  Particles x = start(1, 10, 1.0);
  flow.advance_to(x, 0.5);
  ASSERT_EQ(seen.size(), flow.steps_taken());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].steps, i + 1);
    EXPECT_GT(seen[i].step, 0.0);
    if (i > 0) {
      EXPECT_GT(seen[i].time, seen[i - 1].time);
    }
  }
  EXPECT_DOUBLE_EQ(seen.back().time, 0.5);
}

}  // namespace
}  // namespace cpm
